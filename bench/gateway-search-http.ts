import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load, median, medianResult, type LoadResult } from "./lib/http-load.ts";
import { repoRoot, startService } from "@app/testkit/processes";
import { testCatalog } from "@app/testkit/catalog";
import { realisticQueries } from "./lib/queries.ts";

export interface GatewaySearchFigures {
  /** Which catalog the figures were measured on (the real one, or the generated fixture when it is absent). */
  catalog: string;
  connections: number;
  roundSec: number;
  rounds: number;
  queries: number;
  /** The baseline's page is the gateway's own answer whose size is nearest the mix's mean. */
  fixedPageBytes: number;
  meanPageBytes: number;
  /** Medians over the rounds. */
  baseline: LoadResult;
  gateway: LoadResult;
  throughputRatio: number;
  p99Ratio: number;
  perRound: { gateway: LoadResult; baseline: LoadResult }[];
}

/**
 * /nodes/search through the real gateway (embedded search over the real catalog) against a
 * bare Express app serving one precomputed page of the same size. Both run as their own
 * processes; rounds alternate between them so that whatever else the machine does weighs on
 * both alike, and the figures are the medians.
 */
export async function run(opts = { connections: 32, roundSec: 5, rounds: 5 }): Promise<GatewaySearchFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-gw-"));
  const catalog = testCatalog();
  console.log(`catalog: ${catalog.description}`);
  const queries = realisticQueries(catalog.path, 400).map((q) => `/nodes/search?${q}`);
  const gateway = await startService(join(repoRoot, "services/gateway/src/main.ts"), {
    DATA_DIR: dataDir,
    CATALOG_SOURCE: catalog.path,
  });
  const pageFile = join(dataDir, "page.json");
  const fixedPage = await pageOfMeanSize(gateway.url, queries);
  writeFileSync(pageFile, fixedPage.body);
  const baseline = await startService(join(repoRoot, "bench/servers/fixed-page-server.ts"), { FIXED_PAGE_FILE: pageFile });
  const perRound: { gateway: LoadResult; baseline: LoadResult }[] = [];
  try {
    await load(gateway.url, queries, { connections: opts.connections, durationSec: 2 }); // warm-up (JIT)
    await load(baseline.url, queries, { connections: opts.connections, durationSec: 2 });
    for (let i = 0; i < opts.rounds; i++) {
      const g = await load(gateway.url, queries, { connections: opts.connections, durationSec: opts.roundSec });
      const b = await load(baseline.url, queries, { connections: opts.connections, durationSec: opts.roundSec });
      perRound.push({ gateway: g, baseline: b });
    }
  } finally {
    await Promise.all([gateway.stop(), baseline.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
  const g = medianResult(perRound.map((r) => r.gateway));
  const b = medianResult(perRound.map((r) => r.baseline));
  return {
    catalog: catalog.description,
    ...opts,
    queries: queries.length,
    fixedPageBytes: Buffer.byteLength(fixedPage.body),
    meanPageBytes: fixedPage.meanBytes,
    baseline: b,
    gateway: g,
    throughputRatio: median(perRound.map((r) => r.gateway.requestsPerSec / r.baseline.requestsPerSec)),
    p99Ratio: median(perRound.map((r) => r.gateway.p99Ms / Math.max(r.baseline.p99Ms, 1))),
    perRound,
  };
}

/** Ask every query once and keep the answer nearest the mean size: "a page of the same size". */
async function pageOfMeanSize(url: string, paths: string[]): Promise<{ body: string; meanBytes: number }> {
  const bodies: string[] = [];
  for (const p of paths) bodies.push(await (await fetch(`${url}${p}`)).text());
  const meanBytes = Math.round(bodies.reduce((a, b) => a + Buffer.byteLength(b), 0) / bodies.length);
  const body = bodies.reduce((best, b) => (Math.abs(Buffer.byteLength(b) - meanBytes) < Math.abs(Buffer.byteLength(best) - meanBytes) ? b : best));
  return { body, meanBytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
