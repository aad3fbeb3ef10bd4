import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, sleep, startService, type Service } from "@app/testkit/processes";
import { fillSqliteStore } from "./lib/asset-list-fill.ts";
import { postFile } from "./lib/big-file-post.ts";

/**
 * The gateway's event loop while its embedded record store (SQLite) works: the gateway (its own
 * process, embedded upload service, DATA_DIR on disk) over ASSET_BENCH_REFS records (default
 * 200,000) of the key's owner, with 4 upload loops (`POST /api/assets`, 32 MiB of new content
 * each time) and 4 list readers (`GET /api/assets` filtered by a tag and a metadata_filter, one
 * request at a time each) for WINDOW_MS. The figure is the gateway's own event-loop delay (its
 * `/metrics`, prom-client's histogram, reset by each scrape), p99 (goal < 10 ms) and max, against
 * the same process idle just before; plus the readers' latency and the uploads' rate.
 * ASSET_BENCH_UPLOADERS and ASSET_BENCH_READERS (default 4 each) set the two loads apart, to tell
 * which one holds the loop.
 */
const KEY = "bench-event-loop-key";
const OWNER = "API_KEYS[0]";
const WINDOW_MS = 20_000;

export interface EventLoopFigures {
  records: number;
  idle: { p99Ms: number; maxMs: number };
  loaded: { p99Ms: number; maxMs: number };
  lists: { requests: number; p50Ms: number; p99Ms: number };
  uploads: { count: number; mbps: number };
  summary: string[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });
const round = (x: number) => Math.round(x * 100) / 100;

async function eventLoopDelay(base: string): Promise<{ p99Ms: number; maxMs: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const ms = (name: string) => round(Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN) * 1000);
  return { p99Ms: ms("nodejs_eventloop_lag_p99_seconds"), maxMs: ms("nodejs_eventloop_lag_max_seconds") };
}

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
  const records = Number(process.env.ASSET_BENCH_REFS ?? 200_000);
  const dataDir = mkdtempSync(join(tmpdir(), "bench-store-loop-"));
  let gateway: Service | undefined;
  try {
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
    await eventLoopDelay(base);
    await sleep(5_000);
    const idle = await eventLoopDelay(base);

    let stop = false;
    const lists: number[] = [];
    let uploaded = 0;
    const started = performance.now();
    const readerCount = Number(process.env.ASSET_BENCH_READERS ?? 4);
    const uploaderCount = Number(process.env.ASSET_BENCH_UPLOADERS ?? 4);
    const readers = Array.from({ length: readerCount }, async () => {
      while (!stop) {
        const t = performance.now();
        const status = await getStatus(base + listPath);
        if (status !== 200) throw new Error(`list answered ${status}`);
        lists.push(performance.now() - t);
      }
    });
    const uploaders = Array.from({ length: uploaderCount }, async (_, u) => {
      for (let i = 0; !stop; i++) {
        await postFile(base, "/api/assets", 32, `loop-${u}-${i}-${Date.now()}`, KEY, { tags: ["models", "model_type:loras", `t${i % 100}`] });
        uploaded++;
      }
    });
    await eventLoopDelay(base);
    await sleep(WINDOW_MS);
    const loaded = await eventLoopDelay(base);
    stop = true;
    await Promise.all([...readers, ...uploaders]);
    const seconds = (performance.now() - started) / 1000;
    const sorted = [...lists].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!) : NaN);
    const figures = {
      records,
      idle,
      loaded,
      lists: { requests: lists.length, p50Ms: at(0.5), p99Ms: at(0.99) },
      uploads: { count: uploaded, mbps: round((uploaded * 32 * 1024 * 1024) / 1e6 / seconds) },
    };
    return {
      ...figures,
      summary: [
        `event loop with ${uploaderCount} uploads + ${readerCount} list readers over ${records} SQLite records: delay p99 ${loaded.p99Ms} ms (goal < 10), max ${loaded.maxMs} ms (idle p99 ${idle.p99Ms}, max ${idle.maxMs}); ` +
          `lists p50 ${figures.lists.p50Ms} / p99 ${figures.lists.p99Ms} ms (${lists.length}); uploads ${uploaded} x 32 MiB, ${figures.uploads.mbps} MB/s`,
      ],
    };
  } catch (err) {
    if (gateway) console.error(gateway.output.slice(-20).join("\n"));
    throw err;
  } finally {
    agent.destroy();
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
