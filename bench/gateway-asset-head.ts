import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blake3 } from "@napi-rs/blake-hash";
import sharp from "sharp";
import { createSqliteReferenceStore } from "@app/upload/internal";
import { repoRoot, startService } from "@app/testkit/processes";
import { cycle, load, median, medianResult, type LoadResult } from "./lib/http-load.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";

export interface AssetHeadFigures {
  connections: number;
  roundSec: number;
  rounds: number;
  /** Distinct hashes asked, half stored (200) and half not (404). */
  hashes: number;
  /** Medians over the rounds. */
  baseline: LoadResult;
  gateway: LoadResult;
  throughputRatio: number;
  p99Ratio: number;
  perRound: { gateway: LoadResult; baseline: LoadResult }[];
  /** The embedded record store (SQLite file): open + create tables, and the process's RSS growth. */
  sqliteStore: { emptyOpenMs: number; reopenWith10kRecordsMs: number; insertMsPerRecord: number; listPageMs: number; rssGrowthMiB: number };
  figures: Figure[];
  summary: string[];
}

const KEY = "bench-asset-key";
/**
 * `HEAD /api/assets/hash/{hash}` (the asset API's dedup check) through the real gateway in
 * embedded mode, keyed, half the hashes stored and half not, against the search bench's baseline:
 * a bare Express app (its own process) answering the same HEAD requests with nothing to look up.
 * Rounds alternate; figures are medians.
 */
export async function run(opts = { connections: 32, roundSec: 5, rounds: 5 }): Promise<AssetHeadFigures> {
  const sqliteStore = await measureSqliteStore();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-asset-head-"));
  const gateway = await startService(join(repoRoot, "services/gateway/src/main.ts"), { DATA_DIR: dataDir, API_KEYS: KEY });
  const pageFile = join(dataDir, "empty.json");
  writeFileSync(pageFile, JSON.stringify([""]));
  const baseline = await startService(join(repoRoot, "bench/servers/sample-pages-server.ts"), { SAMPLE_PAGES_FILE: pageFile });
  const paths: string[] = [];
  for (let i = 0; i < 50; i++) {
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: i, g: 255 - i, b: (i * 5) % 256 } } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "b.png");
    const up = await fetch(`${gateway.url}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": KEY } });
    if (up.status !== 200) throw new Error(`upload answered ${up.status}`);
    paths.push(`/api/assets/hash/blake3:${blake3(png).toString("hex")}`);
    paths.push(`/api/assets/hash/blake3:${blake3(Buffer.from(`absent ${i}`)).toString("hex")}`);
  }
  const http = { connections: opts.connections, method: "HEAD" as const, headers: { "X-API-Key": KEY } };
  const perRound: { gateway: LoadResult; baseline: LoadResult }[] = [];
  try {
    await load(gateway.url, cycle(paths), { ...http, durationSec: 2 }); // warm-up (JIT)
    await load(baseline.url, cycle(paths), { ...http, durationSec: 2 });
    for (let i = 0; i < opts.rounds; i++) {
      const g = await load(gateway.url, cycle(paths), { ...http, durationSec: opts.roundSec });
      const b = await load(baseline.url, cycle(paths), { ...http, durationSec: opts.roundSec });
      perRound.push({ gateway: g, baseline: b });
    }
  } finally {
    await Promise.all([gateway.stop(), baseline.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
  const g = medianResult(perRound.map((r) => r.gateway));
  const b = medianResult(perRound.map((r) => r.baseline));
  const throughputRatio = median(perRound.map((r) => r.gateway.requestsPerSec / r.baseline.requestsPerSec));
  const p99Ratio = median(perRound.map((r) => r.gateway.p99Ms / Math.max(r.baseline.p99Ms, 1)));
  return {
    ...opts,
    hashes: paths.length,
    baseline: b,
    gateway: g,
    throughputRatio,
    p99Ratio,
    perRound,
    sqliteStore,
    figures: [
      figure("HEAD /api/assets/hash/{hash}: throughput", Math.round(g.requestsPerSec), "req/s", {
        baseline: ["bare Express", Math.round(b.requestsPerSec)],
        ratio: throughputRatio,
      }),
      figure("HEAD /api/assets/hash/{hash}: p99 latency", g.p99Ms, "ms", { baseline: ["bare Express", b.p99Ms], ratio: p99Ratio }),
    ],
    summary: [
      `HEAD /api/assets/hash: ${Math.round(g.requestsPerSec)} req/s = ${throughputRatio.toFixed(2)}× bare Express (${Math.round(b.requestsPerSec)}); p99 ${g.p99Ms} ms = ${p99Ratio.toFixed(2)}×`,
    ],
  };
}

/** What choosing SQLite (WebAssembly) costs a process: open time empty and with 10k records, and memory. */
async function measureSqliteStore(): Promise<AssetHeadFigures["sqliteStore"]> {
  const dir = mkdtempSync(join(tmpdir(), "bench-sqlite-"));
  const file = join(dir, "assets.sqlite");
  const rss0 = process.memoryUsage().rss;
  try {
    let t = performance.now();
    const store = createSqliteReferenceStore(file);
    await store.init();
    const emptyOpenMs = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < 10_000; i++) {
      await store.create({
        owner: "bench",
        hash: blake3(Buffer.from(String(i))).toString("hex"),
        name: `image ${i}.png`,
        size: i,
        mimeType: "image/png",
        tags: ["input", `set${i % 20}`],
      });
    }
    const insertMsPerRecord = (performance.now() - t) / 10_000;
    await store.close();
    t = performance.now();
    const reopened = createSqliteReferenceStore(file);
    await reopened.init();
    const reopenWith10kRecordsMs = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < 50; i++)
      await reopened.list({
        owner: "bench",
        tagsAll: [`set${i % 20}`],
        tagsAny: [],
        tagsNone: [],
        metadata: [],
        sort: "created_at",
        order: "desc",
        limit: 50,
        offset: 0,
      });
    const listPageMs = (performance.now() - t) / 50;
    const rssGrowthMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    await reopened.close();
    const round = (x: number) => Math.round(x * 100) / 100;
    return {
      emptyOpenMs: round(emptyOpenMs),
      reopenWith10kRecordsMs: round(reopenWith10kRecordsMs),
      insertMsPerRecord: round(insertMsPerRecord),
      listPageMs: round(listPageMs),
      rssGrowthMiB: round(rssGrowthMiB),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await runWhenMain(import.meta.url, () => run());
