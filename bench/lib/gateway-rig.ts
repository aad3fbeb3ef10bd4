import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startService, type Service } from "@app/testkit/processes";
import { benchCatalogDescription, benchCatalogFile } from "./catalog.ts";
import { load, median, medianResult, type LoadResult, type PathSource } from "./http-load.ts";
import { figure, type Figure } from "./results.ts";

/**
 * The real gateway (embedded search over the catalog, as `pnpm start` runs it) and its HTTP
 * baseline, a bare Express app answering the gateway's own answers to a sample of the load, in
 * turn: what the gateway would cost if searching cost nothing. Each runs as its own process.
 */
export interface GatewayRig {
  /** Which catalog the gateway serves (the real one, or the generated fixture when it is absent). */
  catalog: string;
  gateway: Service;
  baseline: Service;
  /** The mean size of the baseline's pages: the gateway's answers to the sample. */
  meanPageBytes: number;
  stop(): Promise<void>;
}

/**
 * `sample`: the paths whose answers the baseline sends, in turn (asked once each, before any
 * load): the same mix of sizes and characters as the gateway's, not one page of the mean size.
 * `catalogFile`: another catalog than the bench one (e.g. one with versions).
 */
export async function startGatewayRig(sample: readonly string[], catalogFile = benchCatalogFile()): Promise<GatewayRig> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-gw-"));
  const gateway = await startService(join(repoRoot, "services/gateway/src/main.ts"), {
    DATA_DIR: dataDir,
    CATALOG_SOURCE: catalogFile,
  });
  try {
    const pages: string[] = [];
    for (const p of sample) pages.push(await (await fetch(`${gateway.url}${p}`)).text());
    const pagesFile = join(dataDir, "pages.json");
    writeFileSync(pagesFile, JSON.stringify(pages));
    const baseline = await startService(join(repoRoot, "bench/servers/sample-pages-server.ts"), { SAMPLE_PAGES_FILE: pagesFile });
    return {
      catalog: benchCatalogDescription(),
      gateway,
      baseline,
      meanPageBytes: Math.round(pages.reduce((a, b) => a + Buffer.byteLength(b), 0) / pages.length),
      async stop() {
        await Promise.all([gateway.stop(), baseline.stop()]);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

export interface RoundOptions {
  connections: number;
  roundSec: number;
  rounds: number;
  warmupSec: number;
}

export const DEFAULT_ROUNDS: RoundOptions = { connections: 32, roundSec: 5, rounds: 5, warmupSec: 2 };

export interface AlternatingFigures {
  /** Medians over the rounds (max: the largest of any round; CPU per request: the median). */
  gateway: LoadResult;
  baseline: LoadResult;
  /** Medians of each round's gateway / baseline. */
  throughputRatio: number;
  p99Ratio: number;
  cpuPerRequestRatio: number;
  /** Each round's figures, and the gateway's RSS after it: garbage awaiting a full collection makes it rise and fall, a leak only rise. */
  perRound: { gateway: LoadResult; baseline: LoadResult; gatewayRssMiB: number }[];
}

/**
 * Warm both up (JIT), then rounds that alternate between them, so that whatever else the
 * machine does weighs on both alike. `beforeRounds` runs after the warm-up.
 */
export async function alternatingRounds(
  rig: GatewayRig,
  paths: { gateway: PathSource; baseline: PathSource },
  opts: RoundOptions,
  beforeRounds?: () => Promise<void>,
): Promise<AlternatingFigures> {
  const { connections } = opts;
  await load(rig.gateway.url, paths.gateway, { connections, durationSec: opts.warmupSec });
  await load(rig.baseline.url, paths.baseline, { connections, durationSec: opts.warmupSec });
  await beforeRounds?.();
  const perRound: AlternatingFigures["perRound"] = [];
  for (let i = 0; i < opts.rounds; i++) {
    const gateway = await load(rig.gateway.url, paths.gateway, { connections, durationSec: opts.roundSec, serverPid: rig.gateway.pid });
    const gatewayRssMiB = Math.round(rig.gateway.rssKiB() / 1024);
    const baseline = await load(rig.baseline.url, paths.baseline, { connections, durationSec: opts.roundSec, serverPid: rig.baseline.pid });
    perRound.push({ gateway, baseline, gatewayRssMiB });
  }
  const ratio = (f: (r: LoadResult) => number, floor = 0) => median(perRound.map((r) => f(r.gateway) / Math.max(f(r.baseline), floor)));
  return {
    gateway: medianResult(perRound.map((r) => r.gateway)),
    baseline: medianResult(perRound.map((r) => r.baseline)),
    throughputRatio: round2(ratio((r) => r.requestsPerSec)),
    p99Ratio: round2(ratio((r) => r.p99Ms, 1)),
    cpuPerRequestRatio: round2(ratio((r) => r.serverCpuUsPerRequest ?? NaN)),
    perRound,
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** One line for the console: the gateway's figures against the baseline's, with their ratios. */
export function summaryLine(label: string, f: AlternatingFigures, extra = ""): string {
  const g = f.gateway;
  const b = f.baseline;
  const n = (x: number) => Math.round(x).toLocaleString("en");
  return (
    `${label}: ${n(g.requestsPerSec)} req/s = ${f.throughputRatio}× baseline (${n(b.requestsPerSec)}); ` +
    `p50 ${g.p50Ms} / p99 ${g.p99Ms} ms, p99 ${f.p99Ratio}× baseline (${b.p50Ms} / ${b.p99Ms}); ` +
    `max ${g.maxMs} ms (baseline ${b.maxMs}); server CPU ${g.serverCpuUsPerRequest} µs/request = ${f.cpuPerRequestRatio}× baseline (${b.serverCpuUsPerRequest})` +
    (g.errors + g.non2xx > 0 ? `; ${g.errors} errors, ${g.non2xx} non-2xx` : "") +
    extra
  );
}

/** The table's figures of a gateway bench: throughput, p99 and server CPU a request, each against the baseline's. */
export function gatewayFigures(
  label: string,
  f: AlternatingFigures,
  goals: { throughput?: string; p99?: string; max?: string } = {},
): Figure[] {
  const g = f.gateway;
  const b = f.baseline;
  return [
    figure(`${label}: throughput`, Math.round(g.requestsPerSec), "req/s", {
      baseline: ["bare Express", Math.round(b.requestsPerSec)],
      ratio: f.throughputRatio,
      goal: goals.throughput,
    }),
    figure(`${label}: p99 latency`, g.p99Ms, "ms", { baseline: ["bare Express", b.p99Ms], ratio: f.p99Ratio, goal: goals.p99 }),
    figure(`${label}: max latency`, g.maxMs, "ms", { baseline: ["bare Express", b.maxMs], goal: goals.max }),
    figure(`${label}: server CPU a request`, g.serverCpuUsPerRequest ?? NaN, "µs", {
      baseline: ["bare Express", b.serverCpuUsPerRequest ?? NaN],
      ratio: f.cpuPerRequestRatio,
    }),
  ];
}
