import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startService, type Service } from "@app/testkit/processes";
import { postMultipart } from "./lib/multipart-post.ts";
import { SINK_DOES, SINK_DURABILITIES, startSink, type SinkDurability } from "./lib/upload-sinks.ts";

/**
 * `POST /api/assets` with a 1 GiB file (a model's size) through the real gateway (its own
 * process, embedded upload service, filesystem store on this machine's disk), in MB/s against
 * three bare sinks of increasing durability (bench/lib/upload-sinks.ts: hash only; hash and
 * write; hash, write and sync before answering), rounds alternating all of them. The service
 * syncs new content before it answers, so the `sync` sink is its like and the goal (>= 0.9)
 * is against it. Also the same bytes again (known content: nothing written under a hash name)
 * and the gateway's peak RSS (VmHWM), which must not grow with the file. ASSET_BENCH_MIB sets
 * the size, ASSET_BENCH_ROUNDS the rounds.
 */
type Round = Record<SinkDurability, number> & { newContent: number; knownContent: number };

export interface AssetUploadFigures {
  fileMiB: number;
  baselines: typeof SINK_DOES;
  rounds: Round[];
  /** Medians over the rounds, MB/s. */
  mbps: Round;
  /** Medians of each round's service / sink ratio. */
  newContentRatio: Record<SinkDurability, number>;
  knownContentRatio: Record<SinkDurability, number>;
  gatewayPeakRssMiB: number;
  summary: string[];
}

const KEY = "bench-asset-upload-key";
const BOUNDARY = "----benchAsset1gb";
const CHUNK = 1024 * 1024;

/** Streams a multipart body whose file is `mib` MiB of `seed`-distinct bytes, never held whole; resolves with MB/s. */
export function postFile(url: string, path: string, mib: number, seed: string, key = KEY): Promise<number> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="tags"\r\n\r\n["models","model_type:checkpoints","bench"]\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="model.safetensors"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const block = randomBytes(CHUNK);
  const started = performance.now();
  return postMultipart(url, path, { boundary: BOUNDARY, key, length: head.length + mib * CHUNK + tail.length }, (req) => {
    req.write(head);
    let i = 0;
    const pump = () => {
      while (i < mib) {
        // Each MiB starts with the seed and its index: distinct content per seed, no two MiB alike.
        const chunk = Buffer.from(block);
        chunk.write(`${seed}:${i}`, 0, "latin1");
        i++;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end(tail);
    };
    pump();
  }).then(({ status, body }) => {
    if (status >= 300) throw new Error(`${path} answered ${status}: ${body}`);
    return (mib * CHUNK) / 1e6 / ((performance.now() - started) / 1000);
  });
}

const peakRssMiB = (pid: number): number => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
const round = (x: number) => Math.round(x * 100) / 100;
const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
const perSink = (f: (d: SinkDurability) => number) => Object.fromEntries(SINK_DURABILITIES.map((d) => [d, f(d)])) as Record<SinkDurability, number>;

export async function run(): Promise<AssetUploadFigures> {
  const mib = Number(process.env.ASSET_BENCH_MIB ?? 1024);
  const roundCount = Number(process.env.ASSET_BENCH_ROUNDS ?? 3);
  const dataDir = mkdtempSync(join(tmpdir(), "bench-asset-1gb-"));
  const sinks: Partial<Record<SinkDurability, Service>> = {};
  let gateway: Service | undefined;
  try {
    for (const d of SINK_DURABILITIES) sinks[d] = await startSink(d);
    gateway = await startService(join(repoRoot, "services/gateway/src/main.ts"), { DATA_DIR: dataDir, API_KEYS: KEY }, { readyPath: "/readyz" });
    const rounds: Round[] = [];
    for (let r = 0; r < roundCount; r++) {
      const seed = `${Date.now()}-${r}`;
      const sinkMBps = {} as Record<SinkDurability, number>;
      for (const d of SINK_DURABILITIES) sinkMBps[d] = round(await postFile(sinks[d]!.url, "/", mib, seed));
      const newContent = round(await postFile(gateway.url, "/api/assets", mib, seed));
      const knownContent = round(await postFile(gateway.url, "/api/assets", mib, seed));
      rounds.push({ ...sinkMBps, newContent, knownContent });
    }
    const mbps = { ...perSink((d) => median(rounds.map((x) => x[d]))), newContent: median(rounds.map((x) => x.newContent)), knownContent: median(rounds.map((x) => x.knownContent)) };
    const figures = {
      fileMiB: mib,
      baselines: SINK_DOES,
      rounds,
      mbps,
      newContentRatio: perSink((d) => median(rounds.map((x) => x.newContent / x[d]))),
      knownContentRatio: perSink((d) => median(rounds.map((x) => x.knownContent / x[d]))),
      gatewayPeakRssMiB: round(peakRssMiB(gateway.pid)),
    };
    return {
      ...figures,
      summary: [
        `POST /api/assets, ${mib} MiB file: ${mbps.newContent} MB/s new = ${figures.newContentRatio.sync} of the hash+write+sync sink (${mbps.sync} MB/s; goal >= 0.9), ` +
          `${figures.newContentRatio.write} of hash+write (${mbps.write}), ${figures.newContentRatio.hash} of hash only (${mbps.hash}); ` +
          `${mbps.knownContent} MB/s known content; gateway peak RSS ${figures.gatewayPeakRssMiB} MiB (goal <= 300)`,
      ],
    };
  } catch (err) {
    if (gateway) console.error(gateway.output.slice(-20).join("\n"));
    throw err;
  } finally {
    await gateway?.stop();
    for (const s of Object.values(sinks)) await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
