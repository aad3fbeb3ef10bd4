import { mkdtempSync, rmSync } from "node:fs";
import { beyondResolution, scrapeEventLoopDelay } from "./lib/event-loop-delay.ts";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, sleep, startService, type Service } from "@app/testkit/processes";
import { fillSqliteStore } from "./lib/asset-list-fill.ts";
import { postFile } from "./lib/big-file-post.ts";
import { startSink } from "./lib/upload-sinks.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";
import { testEnv } from "@app/testkit/env";

/**
 * The gateway's event loop while its embedded record store (SQLite) works: the gateway (its own
 * process, embedded upload service, DATA_DIR on disk) over ASSET_BENCH_REFS records (default
 * 200,000) of the key's owner, with 4 upload loops (`POST /api/assets`, 32 MiB of new content
 * each time) and 4 list readers (`GET /api/assets` filtered by a tag and a metadata_filter, one
 * request at a time each) for WINDOW_MS. The figure is the gateway's own event-loop delay (its
 * `/metrics`, prom-client's histogram, reset by each scrape), p99 (goal < 10 ms) and max, against
 * the same process idle just before; plus the readers' latency and the uploads' rate. The
 * baseline, in the same run: the same upload loops for the same window against the
 * hash+write+sync sink (bench/lib/upload-sinks.ts), whose loop does nothing but take the bytes,
 * measured the same way: what the uploads cost a loop on this machine before the service does
 * anything. ASSET_BENCH_UPLOADERS and ASSET_BENCH_READERS (default 4 each) set the two loads
 * apart, to tell which one holds the loop.
 *
 * Delays are beyond the timer's own period: prom-client (and the sink) sample the loop with
 * `monitorEventLoopDelay` at a 10 ms resolution, which records each timer's whole interval, so
 * an idle loop reads about 10 ms; the figure is what exceeds it.
 */
const KEY = "bench-event-loop-key";
const OWNER = "API_KEYS[0]";
const WINDOW_MS = 20_000;

export interface EventLoopFigures {
  records: number;
  /** The sync sink's own loop under the same upload loops, and their rate there. */
  baseline: { p99Ms: number; maxMs: number; uploads: { count: number; mbps: number } };
  idle: { p99Ms: number; maxMs: number };
  loaded: { p99Ms: number; maxMs: number };
  lists: { requests: number; p50Ms: number; p99Ms: number };
  uploads: { count: number; mbps: number };
  figures: Figure[];
  summary: string[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });
const round = (x: number) => Math.round(x * 100) / 100;
/** The sink's own loop since its last `/loop` (bench/servers/upload-sink.ts), measured as the gateway's. */
async function sinkLoopDelay(sink: string): Promise<{ p99Ms: number; maxMs: number }> {
  const { p99Ms, maxMs } = (await (await fetch(`${sink}/loop`)).json()) as { p99Ms: number; maxMs: number };
  return { p99Ms: beyondResolution(p99Ms), maxMs: beyondResolution(maxMs) };
}

/** `count` loops posting 32 MiB of new content each time to `url` until `stop()` says so; resolves with the uploads made. */
function uploadLoops(url: string, path: string, count: number, stop: () => boolean): Promise<number> {
  let uploaded = 0;
  const loops = Array.from({ length: count }, async (_, u) => {
    for (let i = 0; !stop(); i++) {
      await postFile(url, path, 32, `loop-${u}-${i}-${Date.now()}`, KEY, { tags: ["models", "model_type:loras", `t${i % 100}`] });
      uploaded++;
    }
  });
  return Promise.all(loops).then(() => uploaded);
}
const mbps = (uploads: number, seconds: number) => round((uploads * 32 * 1024 * 1024) / 1e6 / seconds);

function getStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { "x-api-key": KEY } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

export async function run(): Promise<EventLoopFigures> {
  const records = testEnv.ASSET_BENCH_REFS ?? 200_000;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-store-loop-"));
  let gateway: Service | undefined;
  let sink: Service | undefined;
  const readerCount = testEnv.ASSET_BENCH_READERS;
  const uploaderCount = testEnv.ASSET_BENCH_UPLOADERS;
  try {
    sink = await startSink("sync");
    await sinkLoopDelay(sink.url);
    let sinkStop = false;
    const sinkStarted = performance.now();
    const sinkUploads = uploadLoops(sink.url, "/", uploaderCount, () => sinkStop);
    await sleep(WINDOW_MS);
    const sinkLoop = await sinkLoopDelay(sink.url);
    sinkStop = true;
    const sinkCount = await sinkUploads;
    const baseline = { ...sinkLoop, uploads: { count: sinkCount, mbps: mbps(sinkCount, (performance.now() - sinkStarted) / 1000) } };
    await sink.stop();
    sink = undefined;

    await fillSqliteStore(dataDir, records, OWNER);
    gateway = await startService(
      join(repoRoot, "services/gateway/src/main.ts"),
      { DATA_DIR: dataDir, API_KEYS: KEY, RATE_LIMIT_UPLOAD_RPM: "0", RATE_LIMIT_UPLOAD_MBPM: "0", RATE_LIMIT_ASSETS_RPM: "0" },
      { readyPath: "/readyz" },
    );
    const base = gateway.url;
    const filter = encodeURIComponent(JSON.stringify({ group: "g7" }));
    const listPath = `/api/assets?include_tags=t7&metadata_filter=${filter}&limit=20&sort=created_at&order=desc`;
    if ((await getStatus(base + listPath)) !== 200) throw new Error(`${listPath} did not answer 200`);
    await scrapeEventLoopDelay(base);
    await sleep(5_000);
    const idle = await scrapeEventLoopDelay(base);

    let stop = false;
    const lists: number[] = [];
    const started = performance.now();
    const readers = Array.from({ length: readerCount }, async () => {
      while (!stop) {
        const t = performance.now();
        const status = await getStatus(base + listPath);
        if (status !== 200) throw new Error(`list answered ${status}`);
        lists.push(performance.now() - t);
      }
    });
    const uploads = uploadLoops(base, "/api/assets", uploaderCount, () => stop);
    await scrapeEventLoopDelay(base);
    await sleep(WINDOW_MS);
    const loaded = await scrapeEventLoopDelay(base);
    stop = true;
    const [uploaded] = await Promise.all([uploads, ...readers]);
    const seconds = (performance.now() - started) / 1000;
    const sorted = [...lists].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!) : NaN);
    const figures = {
      records,
      baseline,
      idle,
      loaded,
      lists: { requests: lists.length, p50Ms: at(0.5), p99Ms: at(0.99) },
      uploads: { count: uploaded, mbps: mbps(uploaded, seconds) },
    };
    return {
      ...figures,
      figures: [
        figure(
          `gateway event-loop delay p99 beyond the timer, ${uploaderCount} uploads + ${readerCount} list readers`,
          loaded.p99Ms,
          "ms",
          { baseline: ["the sync sink's own loop under the same uploads", baseline.p99Ms], goal: "< 10 ms" },
        ),
        figure("gateway upload rate under that load", figures.uploads.mbps, "MB/s", { baseline: ["the sync sink", baseline.uploads.mbps] }),
      ],
      summary: [
        `event loop with ${uploaderCount} uploads + ${readerCount} list readers over ${records} SQLite records: delay p99 ${loaded.p99Ms} ms (goal < 10), max ${loaded.maxMs} ms (idle p99 ${idle.p99Ms}, max ${idle.maxMs}); ` +
          `lists p50 ${figures.lists.p50Ms} / p99 ${figures.lists.p99Ms} ms (${lists.length}); uploads ${uploaded} x 32 MiB, ${figures.uploads.mbps} MB/s; ` +
          `the sync sink's own loop under the same uploads: p99 ${baseline.p99Ms}, max ${baseline.maxMs} ms (${baseline.uploads.count} x 32 MiB, ${baseline.uploads.mbps} MB/s)`,
      ],
    };
  } catch (err) {
    if (gateway) console.error(gateway.output.slice(-20).join("\n"));
    throw err;
  } finally {
    agent.destroy();
    await sink?.stop();
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runWhenMain(import.meta.url, () => run());
