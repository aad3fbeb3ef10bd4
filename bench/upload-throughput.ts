import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import sharp from "sharp";
import { repoRoot, startService } from "@app/testkit/processes";
import { postMultipart } from "./lib/multipart-post.ts";
import { SINK_DOES, SINK_DURABILITIES, startSink, type SinkDurability } from "./lib/upload-sinks.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";

/**
 * Upload throughput: 40 MB PNGs posted to the spec's route (`POST /api/upload/image`, its image
 * checks included) through the real gateway (its own process, real port, the upload service
 * mounted in it, filesystem store) as new content and as duplicates, in MB/s against three bare
 * sinks of increasing durability in the same run (bench/lib/upload-sinks.ts; rounds alternate
 * all of them). The store syncs new content before answering, so the `sync` sink is its like
 * and the goal (>= 0.7) is against it. Also: bytes the store gained on the duplicate pass, the
 * service's peak RSS, and the time per mask (derivatives included) for 1024² and 4096² originals.
 */
const KEY = "bench-upload-key";
const BOUNDARY = "----benchBoundary9f8e7d";

export interface UploadFigures {
  imageBytes: number;
  baselines: typeof SINK_DOES;
  uploadsPerPass: number;
  /** DATA_DIR on this machine's disk (what a deployment gets), buffered writes. */
  disk: PassFigures;
  /** Peak RSS after the mask passes too (sharp holds decoded 4096² images per running job). */
  servicePeakRssWithMasksMiB: number;
  maskMs: Record<string, { perMaskMs: number; masks: number }>;
  figures: Figure[];
  summary: string[];
}

/** A PNG with a distinct tEXt chunk after IHDR: new bytes (a new hash), the same pixels. */
function variant(png: Buffer, tag: string): Buffer {
  const data = Buffer.from(`Comment\0${tag}`, "latin1");
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from("tEXt"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td) >>> 0);
  const ihdrEnd = 8 + 25;
  return Buffer.concat([png.subarray(0, ihdrEnd), len, td, crc, png.subarray(ihdrEnd)]);
}

function body(image: Buffer, filename: string): Buffer[] {
  return [
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n`),
    image,
    Buffer.from(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="type"\r\n\r\ninput\r\n--${BOUNDARY}--\r\n`),
  ];
}

function post(url: string, path: string, parts: Buffer[], fields: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const extra = Object.entries(fields).map(([k, v]) =>
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`),
  );
  const all = [...extra, ...parts];
  const length = all.reduce((n, b) => n + b.length, 0);
  return postMultipart(url, path, { boundary: BOUNDARY, key: KEY, length }, (req) => {
    for (const b of all) req.write(b);
    req.end();
  });
}

async function timeUploads(url: string, path: string, images: Buffer[]): Promise<number> {
  const started = performance.now();
  let bytes = 0;
  for (const [i, image] of images.entries()) {
    const res = await post(url, path, body(image, `bench-${i}.png`));
    if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${res.body}`);
    bytes += image.length;
  }
  return bytes / 1e6 / ((performance.now() - started) / 1000);
}

function storeUsage(blobs: string): { bytes: number; objects: number } {
  let bytes = 0;
  let objects = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (p !== join(blobs, "tmp")) walk(p);
      } else if (/^[0-9a-f]{64}$/.test(e.name)) {
        bytes += statSync(p).size;
        objects++;
      }
    }
  };
  walk(blobs);
  return { bytes, objects };
}

const procStatus = (pid: number, field: string): number => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
};
/** CPU seconds (user + system, all threads) a process has used so far. */
const procCpuSec = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
};
const procWchar = (pid: number): number => Number(/^wchar: (\d+)/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? NaN);

async function maskTimings(url: string, edge: number, masks: number): Promise<{ perMaskMs: number; masks: number }> {
  const original = await sharp({
    create: { width: edge / 16, height: edge / 16, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 50 } },
  })
    .resize(edge, edge, { kernel: "cubic" })
    .png({ compressionLevel: 6 })
    .toBuffer();
  const up = await post(url, "/api/upload/image", body(variant(original, `mask-original-${edge}-${Date.now()}`), "original.png"));
  if (up.status !== 200) throw new Error(`original upload answered ${up.status}: ${up.body}`);
  const name = (JSON.parse(up.body) as { name: string }).name;
  let total = 0;
  for (let i = 0; i < masks; i++) {
    // An alpha mask of the original's size, as ComfyUI's mask editor sends: a transparent square that moves each time.
    const raw = Buffer.alloc(edge * edge * 4, 255);
    const side = edge / 4;
    const x0 = Math.floor((i * edge) / (masks + 2));
    for (let y = x0; y < x0 + side; y++) for (let x = x0; x < x0 + side; x++) raw[(y * edge + x) * 4 + 3] = 0;
    const mask = await sharp(raw, { raw: { width: edge, height: edge, channels: 4 } })
      .png()
      .toBuffer();
    const started = performance.now();
    const res = await post(url, "/api/upload/mask", body(mask, "clipspace-mask.png"), {
      original_ref: JSON.stringify({ filename: name, subfolder: "clipspace", type: "input" }),
    });
    total += performance.now() - started;
    if (res.status !== 200) throw new Error(`mask upload answered ${res.status}: ${res.body}`);
  }
  return { perMaskMs: Math.round(total / masks), masks };
}

type Round = Record<SinkDurability, number> & { newContentMBps: number; duplicateMBps: number };

interface PassFigures {
  /** Medians over the rounds, MB/s: each sink, new content, duplicates. */
  mbps: Round;
  /** Medians of each round's service / sink ratios. */
  newContentRatio: Record<SinkDurability, number>;
  duplicateRatio: Record<SinkDurability, number>;
  rounds: Round[];
  /**
   * CPU seconds per GB received, the syncing sink and the service (new-content passes): less
   * sensitive than MB/s to other processes on the machine. The service's includes its writer threads.
   */
  cpuSecPerGB: { syncSink: number; newContent: number; ratio: number };
  /** Summed over the duplicate passes: what the store gained (0 and 0 is the promise) and what went to temporaries. */
  duplicatePasses: { storeBytesAdded: number; objectsAdded: number; tempBytesWrittenAndRemoved: number };
  servicePeakRssMiB: number;
}

/**
 * Rounds alternate baseline and service so that load from other processes on this shared
 * machine hits both alike; the figures are medians over the rounds.
 */
async function measure(base: Buffer, opts: { uploads: number; rounds: number }) {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-upload-"));
  const sinks = {} as Record<SinkDurability, Awaited<ReturnType<typeof startSink>>>;
  for (const d of SINK_DURABILITIES) sinks[d] = await startSink(d);
  // Through the gateway, as users upload: embedded upload service, in-process jobs.
  const service = await startService(
    join(repoRoot, "services/gateway/src/main.ts"),
    {
      DATA_DIR: dataDir,
      API_KEYS: KEY,
      MASK_JOB_TIMEOUT_MS: "300000",
    },
    { readyPath: "/readyz" },
  );
  try {
    const warm = [variant(base, `warm-a-${Date.now()}`), variant(base, `warm-b-${Date.now()}`)];
    for (const d of SINK_DURABILITIES) await timeUploads(sinks[d].url, "/", warm);
    await timeUploads(service.url, "/api/upload/image", warm);
    const blobs = join(dataDir, "blobs");
    const rounds: Round[] = [];
    const dup = { storeBytesAdded: 0, objectsAdded: 0, tempBytesWrittenAndRemoved: 0 };
    const cpu = { baseline: 0, service: 0, bytes: 0 };
    for (let r = 0; r < opts.rounds; r++) {
      const fresh = Array.from({ length: opts.uploads }, (_, i) => variant(base, `new-${r}-${i}-${Date.now()}`));
      const sinkMBps = {} as Record<SinkDurability, number>;
      let c0 = 0;
      for (const d of SINK_DURABILITIES) {
        c0 = procCpuSec(sinks[d].pid);
        sinkMBps[d] = round(await timeUploads(sinks[d].url, "/", fresh));
        if (d === "sync") cpu.baseline += procCpuSec(sinks[d].pid) - c0;
      }
      c0 = procCpuSec(service.pid);
      const newContentMBps = await timeUploads(service.url, "/api/upload/image", fresh);
      cpu.service += procCpuSec(service.pid) - c0;
      cpu.bytes += fresh.reduce((n, b) => n + b.length, 0);
      const before = storeUsage(blobs);
      const wcharBefore = procWchar(service.pid);
      const duplicateMBps = await timeUploads(
        service.url,
        "/api/upload/image",
        fresh.map(() => fresh[0]!),
      );
      dup.tempBytesWrittenAndRemoved += procWchar(service.pid) - wcharBefore;
      const after = storeUsage(blobs);
      dup.storeBytesAdded += after.bytes - before.bytes;
      dup.objectsAdded += after.objects - before.objects;
      rounds.push({ ...sinkMBps, newContentMBps: round(newContentMBps), duplicateMBps: round(duplicateMBps) });
    }
    const med = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
    const perSink = (f: (d: SinkDurability) => number) =>
      Object.fromEntries(SINK_DURABILITIES.map((d) => [d, f(d)])) as Record<SinkDurability, number>;
    const figures: PassFigures = {
      mbps: {
        ...perSink((d) => med(rounds.map((x) => x[d]))),
        newContentMBps: med(rounds.map((x) => x.newContentMBps)),
        duplicateMBps: med(rounds.map((x) => x.duplicateMBps)),
      },
      newContentRatio: perSink((d) => med(rounds.map((x) => x.newContentMBps / x[d]))),
      duplicateRatio: perSink((d) => med(rounds.map((x) => x.duplicateMBps / x[d]))),
      rounds,
      cpuSecPerGB: {
        syncSink: round(cpu.baseline / (cpu.bytes / 1e9)),
        newContent: round(cpu.service / (cpu.bytes / 1e9)),
        ratio: round(cpu.service / cpu.baseline),
      },
      duplicatePasses: dup,
      servicePeakRssMiB: round(procStatus(service.pid, "VmHWM")),
    };
    const maskMs: UploadFigures["maskMs"] = {
      "1024x1024": await maskTimings(service.url, 1024, 5),
      "4096x4096": await maskTimings(service.url, 4096, 3),
    };
    return { figures, maskMs, peakWithMasksMiB: round(procStatus(service.pid, "VmHWM")) };
  } finally {
    for (const d of SINK_DURABILITIES) await sinks[d].stop();
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(opts = { uploads: 6, rounds: 5, targetBytes: 40_000_000 }): Promise<UploadFigures> {
  // One noisy PNG of about 40 MB; each upload of "new content" is a variant with its own hash.
  const edge = Math.round(Math.sqrt(opts.targetBytes / 3));
  const base = await sharp({
    create: { width: edge, height: edge, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } },
  })
    .png({ compressionLevel: 1 })
    .toBuffer();
  const disk = await measure(base, opts);
  return {
    imageBytes: base.length,
    baselines: SINK_DOES,
    uploadsPerPass: opts.uploads,
    disk: disk.figures,
    servicePeakRssWithMasksMiB: disk.peakWithMasksMiB,
    maskMs: disk.maskMs,
    figures: [
      figure(`POST /api/upload/image, ${round(base.length / 1e6)} MB PNGs, new content`, disk.figures.mbps.newContentMBps, "MB/s", {
        baseline: ["hash+write+sync sink", disk.figures.mbps.sync],
        ratio: disk.figures.newContentRatio.sync,
        goal: "ratio ≥ 0.7",
      }),
    ],
    summary: [
      `POST /api/upload/image, ${round(base.length / 1e6)} MB PNGs: ${disk.figures.mbps.newContentMBps} MB/s new = ${disk.figures.newContentRatio.sync} of the hash+write+sync sink (${disk.figures.mbps.sync} MB/s; goal >= 0.7), ` +
        `${disk.figures.newContentRatio.write} of hash+write (${disk.figures.mbps.write}), ${disk.figures.newContentRatio.hash} of hash only (${disk.figures.mbps.hash}); ` +
        `duplicates ${disk.figures.mbps.duplicateMBps} MB/s; service peak RSS ${disk.figures.servicePeakRssMiB} MiB`,
    ],
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

await runWhenMain(import.meta.url, () => run());
