import { mkdtempSync, rmSync } from "node:fs";
import { Agent, get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startService, type Service } from "@app/testkit/processes";
import { postFile } from "./lib/big-file-post.ts";
import { cpuSeconds } from "./lib/http-load.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";
import { testEnv } from "@app/testkit/env";

/**
 * Downloading a 1 GiB asset through the real gateway (its own process, embedded upload
 * service, filesystem store): `GET /api/assets/{id}/content` (with the key) and its signed
 * `preview_url` on `/api/view` (no key), whole and by ranges, in MB/s
 * against a bare node:http server sending the same stored file with `fs.createReadStream`
 * (bench/servers/file-read-server.ts), rounds alternating the two. Ranges: RANGE_COUNT requests
 * of 4 MiB at offsets spread over the file, 4 at a time on kept-alive connections (a video
 * player's or a resumed download's pattern). The file is in the page cache for both after the
 * first round, so this measures the serving, not the disk. ASSET_BENCH_MIB sets the size;
 * READ_CHUNK_KIB the baseline's read size (1024 as the store reads; 64 is the stream's default).
 */
const KEY = "bench-asset-download-key";
const RANGE = 4 * 1024 * 1024;
const RANGE_COUNT = 128;
/** Measured rounds, after one that fills the page cache: a shared machine moves single rounds 2-4x, so the medians need several. */
const ROUNDS = 7;

export interface DownloadFigures {
  fileMiB: number;
  baseline: string;
  rounds: Record<string, number>[];
  /** Medians over the rounds, MB/s. */
  mbps: Record<string, number>;
  /** Medians of each round's route / baseline ratios (goal >= 0.8). */
  ratio: Record<string, number>;
  /**
   * The serving process's CPU (user + system, all its threads) per GiB sent, ms, medians over
   * the rounds: what each byte costs the server, less moved by the machine's load than MB/s.
   */
  cpuMsPerGiB: Record<string, number>;
  /** Baseline CPU / route CPU per byte, medians of the rounds' (the same goal read as CPU: >= 0.8 is at most 1.25x the baseline's work). */
  cpuRatio: Record<string, number>;
  figures: Figure[];
  summary: string[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** GET `path` and count its bytes; resolves with the count. */
function download(url: string, path: string, range?: [number, number]): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    get(
      {
        host: u.hostname,
        port: u.port,
        path,
        agent,
        headers: { "x-api-key": KEY, ...(range && { range: `bytes=${range[0]}-${range[1]}` }) },
      },
      (res) => {
        if (res.statusCode !== (range ? 206 : 200)) reject(new Error(`${path} answered ${res.statusCode}`));
        let n = 0;
        res.on("data", (d: Buffer) => (n += d.length));
        res.on("end", () => resolve(n));
        res.on("error", reject);
      },
    ).on("error", reject);
  });
}

async function whole(url: string, path: string, size: number): Promise<number> {
  const started = performance.now();
  const n = await download(url, path);
  if (n !== size) throw new Error(`${path}: ${n} bytes of ${size}`);
  return n / 1e6 / ((performance.now() - started) / 1000);
}

async function ranges(url: string, path: string, size: number): Promise<number> {
  const starts = Array.from({ length: RANGE_COUNT }, (_, i) => Math.floor(((i * 7919) % RANGE_COUNT) * ((size - RANGE) / RANGE_COUNT)));
  const started = performance.now();
  let bytes = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < starts.length) {
        const s = starts[next++]!;
        const n = await download(url, path, [s, s + RANGE - 1]);
        bytes += n;
      }
    }),
  );
  if (bytes !== RANGE * RANGE_COUNT) throw new Error(`${path}: ${bytes} range bytes`);
  return bytes / 1e6 / ((performance.now() - started) / 1000);
}

const round = (x: number) => Math.round(x * 100) / 100;
const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

export async function run(): Promise<DownloadFigures> {
  const mib = testEnv.ASSET_BENCH_MIB;
  const size = mib * 1024 * 1024;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-asset-dl-"));
  let gateway: Service | undefined;
  let baseline: Service | undefined;
  try {
    gateway = await startService(
      join(repoRoot, "services/gateway/src/main.ts"),
      { DATA_DIR: dataDir, API_KEYS: KEY },
      { readyPath: "/readyz" },
    );
    // Declared a video (random bytes have no signature of their own), so it has a preview_url: /api/view serves it without a key.
    const { body } = await postFile(gateway.url, "/api/assets", mib, `download-${Date.now()}`, KEY, {
      tags: ["input", "bench"],
      filename: "clip.mp4",
      fields: { mime_type: "video/mp4" },
    });
    const asset = JSON.parse(body) as { id: string; asset_hash: string; preview_url: string };
    const hex = asset.asset_hash.slice("blake3:".length);
    baseline = await startService(
      join(repoRoot, "bench/servers/file-read-server.ts"),
      { READ_FILE: join(dataDir, "blobs", hex.slice(0, 2), hex.slice(2, 4), hex), READ_CHUNK_KIB: String(testEnv.READ_CHUNK_KIB) },
      { readyPath: "/ready" },
    );
    const routes: Record<string, [Service, string]> = {
      baseline: [baseline, "/file"],
      content: [gateway, `/api/assets/${asset.id}/content`],
      view: [gateway, asset.preview_url],
    };
    const rounds: Record<string, number>[] = [];
    const cpuRounds: Record<string, number>[] = [];
    const GiB = 1024 ** 3;
    for (let r = 0; r <= ROUNDS; r++) {
      const row: Record<string, number> = {};
      const cpu: Record<string, number> = {};
      for (const [name, [svc, path]] of Object.entries(routes)) {
        let before = cpuSeconds(svc.pid);
        row[`${name}Whole`] = round(await whole(svc.url, path, size));
        cpu[`${name}Whole`] = ((cpuSeconds(svc.pid) - before) * 1000 * GiB) / size;
        before = cpuSeconds(svc.pid);
        row[`${name}Ranges`] = round(await ranges(svc.url, path, size));
        cpu[`${name}Ranges`] = ((cpuSeconds(svc.pid) - before) * 1000 * GiB) / (RANGE * RANGE_COUNT);
      }
      if (r > 0) {
        rounds.push(row); // the first round fills the page cache
        cpuRounds.push(cpu);
      }
    }
    const keys = Object.keys(rounds[0]!);
    const mbps = Object.fromEntries(keys.map((k) => [k, median(rounds.map((x) => x[k]!))]));
    const cpuMsPerGiB = Object.fromEntries(keys.map((k) => [k, Math.round(median(cpuRounds.map((x) => x[k]!)))]));
    const ratio: Record<string, number> = {};
    const cpuRatio: Record<string, number> = {};
    for (const name of Object.keys(routes).filter((n) => n !== "baseline")) {
      for (const kind of ["Whole", "Ranges"]) {
        const k = `${name}${kind}`;
        ratio[k] = median(rounds.map((x) => x[k]! / x[`baseline${kind}`]!));
        cpuRatio[k] = median(cpuRounds.map((x) => x[`baseline${kind}`]! / x[k]!));
      }
    }
    return {
      fileMiB: mib,
      baseline: `bare node:http sending the stored file with fs.createReadStream (${testEnv.READ_CHUNK_KIB} KiB reads, the service's headers), whole or one range`,
      rounds,
      mbps,
      ratio,
      cpuMsPerGiB,
      cpuRatio,
      figures: (["content", "view"] as const).flatMap((route) =>
        (["Whole", "Ranges"] as const).map((kind) =>
          figure(
            `${mib} MiB download, ${route === "content" ? "GET /api/assets/{id}/content" : "GET /api/view (signed preview_url)"}, ${kind === "Whole" ? "whole" : "4 MiB ranges"}`,
            mbps[`${route}${kind}`]!,
            "MB/s",
            {
              baseline: ["bare createReadStream server", mbps[`baseline${kind}`]!],
              ratio: ratio[`${route}${kind}`],
              goal: "ratio ≥ 0.8",
            },
          ),
        ),
      ),
      summary: [
        `GET /api/assets/{id}/content, ${mib} MiB: whole ${mbps.contentWhole} MB/s = ${ratio.contentWhole} of a bare createReadStream server (${mbps.baselineWhole}), ` +
          `4 MiB ranges ${mbps.contentRanges} MB/s = ${ratio.contentRanges} (${mbps.baselineRanges}); goal >= 0.8`,
        `GET /api/view (signed preview_url), ${mib} MiB: whole ${mbps.viewWhole} MB/s = ${ratio.viewWhole}, 4 MiB ranges ${mbps.viewRanges} MB/s = ${ratio.viewRanges}; goal >= 0.8`,
        `server CPU ms per GiB sent, whole / 4 MiB ranges: baseline ${cpuMsPerGiB.baselineWhole} / ${cpuMsPerGiB.baselineRanges}, ` +
          `…/content ${cpuMsPerGiB.contentWhole} / ${cpuMsPerGiB.contentRanges} (baseline / route ${cpuRatio.contentWhole} / ${cpuRatio.contentRanges}), ` +
          `/api/view ${cpuMsPerGiB.viewWhole} / ${cpuMsPerGiB.viewRanges} (${cpuRatio.viewWhole} / ${cpuRatio.viewRanges})`,
      ],
    };
  } finally {
    agent.destroy();
    await gateway?.stop();
    await baseline?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runWhenMain(import.meta.url, () => run());
