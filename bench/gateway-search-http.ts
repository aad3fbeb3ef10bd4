import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChildServer } from "./lib/child-server.ts";
import { load, type LoadResult } from "./lib/http-load.ts";
import { catalogPath, repoRoot } from "./lib/paths.ts";
import { realisticQueries } from "./lib/queries.ts";

export interface GatewaySearchFigures {
  connections: number;
  durationSec: number;
  queries: number;
  baseline: LoadResult;
  gateway: LoadResult;
  throughputRatio: number;
  p99Ratio: number;
}

/**
 * /nodes/search through the real gateway (embedded search, the real catalog) against a bare
 * Express app serving one precomputed page of the same size, same machine, same run.
 */
export async function run(opts = { connections: 32, durationSec: 10 }): Promise<GatewaySearchFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-gw-"));
  const queries = realisticQueries(catalogPath(), 400).map((q) => `/nodes/search?${q}`);
  const gateway = await startChildServer(join(repoRoot, "services/gateway/src/main.ts"), {
    DATA_DIR: dataDir,
    CATALOG_SOURCE: catalogPath(),
    API_KEYS: "bench-key",
  });
  let gatewayResult: LoadResult;
  let page: string;
  try {
    page = await (await fetch(`${gateway.url}/nodes/search?search=comfyui&limit=10`)).text();
    await load(gateway.url, queries, { connections: opts.connections, durationSec: 2 }); // warm-up
    gatewayResult = await load(gateway.url, queries, opts);
  } finally {
    await gateway.stop();
  }
  const pageFile = join(dataDir, "page.json");
  writeFileSync(pageFile, page);
  const baseline = await startChildServer(join(repoRoot, "bench/servers/fixed-page-server.ts"), { FIXED_PAGE_FILE: pageFile });
  let baselineResult: LoadResult;
  try {
    await load(baseline.url, queries, { connections: opts.connections, durationSec: 2 });
    baselineResult = await load(baseline.url, queries, opts);
  } finally {
    await baseline.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    ...opts,
    queries: queries.length,
    baseline: baselineResult,
    gateway: gatewayResult,
    throughputRatio: gatewayResult.requestsPerSec / baselineResult.requestsPerSec,
    p99Ratio: gatewayResult.p99Ms / Math.max(baselineResult.p99Ms, 1),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
