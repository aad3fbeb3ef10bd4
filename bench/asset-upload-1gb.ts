import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startService, type Service } from "@app/testkit/processes";
import { postMultipart } from "./lib/multipart-post.ts";

/**
 * `POST /api/assets` with a 1 GiB file (a model's size) through the real gateway (its own
 * process, embedded upload service, filesystem store on this machine's disk), in MB/s against
 * the upload benchmark's baseline: a bare node:http server streaming the body through blake3 to
 * nowhere (bench/upload-baseline-server.ts), rounds alternating the two. Also the same bytes
 * again (known content: nothing written under a hash name) and the gateway's peak RSS, which
 * must not grow with the file. ASSET_BENCH_MIB sets the size.
 */
export interface AssetUploadFigures {
  fileMiB: number;
  rounds: { baselineMBps: number; newContentMBps: number; knownContentMBps: number }[];
  baselineMBps: number;
  newContentMBps: number;
  knownContentMBps: number;
  newContentRatio: number;
  knownContentRatio: number;
  gatewayPeakRssMiB: number;
  summary: string[];
}

const KEY = "bench-asset-upload-key";
const BOUNDARY = "----benchAsset1gb";
const CHUNK = 1024 * 1024;

/** Streams a multipart body whose file is `mib` MiB of `seed`-distinct bytes, never held whole; resolves with MB/s. */
function postFile(url: string, path: string, mib: number, seed: string, peak: () => void): Promise<number> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="tags"\r\n\r\n["models","model_type:checkpoints","bench"]\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="model.safetensors"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const block = randomBytes(CHUNK);
  const started = performance.now();
  return postMultipart(url, path, { boundary: BOUNDARY, key: KEY, length: head.length + mib * CHUNK + tail.length }, (req) => {
    req.write(head);
    let i = 0;
    const pump = () => {
      while (i < mib) {
        // Each MiB starts with the seed and its index: distinct content per seed, no two MiB alike.
        const chunk = Buffer.from(block);
        chunk.write(`${seed}:${i}`, 0, "latin1");
        i++;
        if (i % 64 === 0) peak();
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

const rssMiB = (pid: number): number => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
const round = (x: number) => Math.round(x * 100) / 100;
const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

export async function run(): Promise<AssetUploadFigures> {
  const mib = Number(process.env.ASSET_BENCH_MIB ?? 1024);
  const dataDir = mkdtempSync(join(tmpdir(), "bench-asset-1gb-"));
  let baseline: Service | undefined;
  let gateway: Service | undefined;
  try {
    baseline = await startService(join(repoRoot, "bench/upload-baseline-server.ts"), {}, { readyPath: "/" });
    gateway = await startService(join(repoRoot, "services/gateway/src/main.ts"), { DATA_DIR: dataDir, API_KEYS: KEY }, { readyPath: "/readyz" });
    let peakRss = rssMiB(gateway.pid);
    const peak = () => (peakRss = Math.max(peakRss, rssMiB(gateway!.pid)));
    const rounds: AssetUploadFigures["rounds"] = [];
    for (let r = 0; r < 3; r++) {
      const seed = `${Date.now()}-${r}`;
      const baselineMBps = await postFile(baseline.url, "/", mib, seed, () => undefined);
      const newContentMBps = await postFile(gateway.url, "/api/assets", mib, seed, peak);
      const knownContentMBps = await postFile(gateway.url, "/api/assets", mib, seed, peak);
      rounds.push({ baselineMBps: round(baselineMBps), newContentMBps: round(newContentMBps), knownContentMBps: round(knownContentMBps) });
    }
    const figures = {
      fileMiB: mib,
      rounds,
      baselineMBps: median(rounds.map((x) => x.baselineMBps)),
      newContentMBps: median(rounds.map((x) => x.newContentMBps)),
      knownContentMBps: median(rounds.map((x) => x.knownContentMBps)),
      newContentRatio: median(rounds.map((x) => x.newContentMBps / x.baselineMBps)),
      knownContentRatio: median(rounds.map((x) => x.knownContentMBps / x.baselineMBps)),
      gatewayPeakRssMiB: round(peakRss),
    };
    return {
      ...figures,
      summary: [
        `POST /api/assets, ${mib} MiB file: ${figures.newContentMBps} MB/s new (${figures.newContentRatio} of the bare blake3 sink's ${figures.baselineMBps} MB/s), ${figures.knownContentMBps} MB/s known (${figures.knownContentRatio}); gateway peak RSS ${figures.gatewayPeakRssMiB} MiB`,
      ],
    };
  } catch (err) {
    if (gateway) console.error(gateway.output.slice(-20).join("\n"));
    throw err;
  } finally {
    await gateway?.stop();
    await baseline?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
