import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createServer, get, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@app/platform";
import { catalogVersionOf, createApp, createArchiveService, EmbeddedSearchEngine } from "@app/search/internal";
import { figure, runWhenMain, type BenchOutput } from "./lib/results.ts";
import { testEnv } from "@app/testkit/env";

/**
 * A node archive through `/archives/{id}/{version}/node.zip`, in MB/s, against a bare node:http
 * server sending the same file with `fs.createReadStream` (which is also the upstream storage the
 * service pulls from), rounds alternating: the pull-through (first request of a version: fetched
 * from upstream, hashed with SHA-256 and blake3, written to the blob store with fsync, streamed to
 * the client at once) and the same archive served from the store. All three servers and the
 * client share this process and the machine's 2 cores. ARCHIVE_BENCH_MIB sets the size.
 */
const logger = createLogger("bench-archives", "silent");
const round = (x: number) => Math.round(x * 100) / 100;
const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

function listen(server: Server): Promise<string> {
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function download(url: string, size: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}`));
      let n = 0;
      res.on("data", (d: Buffer) => (n += d.length));
      res.on("end", () =>
        n === size ? resolve(n / 1e6 / ((performance.now() - started) / 1000)) : reject(new Error(`${url}: ${n} of ${size} bytes`)),
      );
      res.on("error", reject);
    }).on("error", reject);
  });
}

export async function run(): Promise<BenchOutput & Record<string, unknown>> {
  const mib = testEnv.ARCHIVE_BENCH_MIB;
  const size = mib * 1024 * 1024;
  const dir = mkdtempSync(join(tmpdir(), "bench-archives-"));
  const file = join(dir, "node.zip");
  const chunk = randomBytes(1024 * 1024);
  writeFileSync(file, Buffer.concat(Array.from({ length: mib }, () => chunk)));
  const upstream = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/zip", "content-length": size });
    createReadStream(file).pipe(res);
  });
  const upstreamUrl = await listen(upstream);
  const ROUNDS = 4;
  const versions = Array.from({ length: ROUNDS }, (_, i) => ({
    version: `1.0.${i}`,
    status: "NodeVersionStatusActive" as const,
    createdAt: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
    downloadUrl: `${upstreamUrl}/file`,
  }));
  const engine = new EmbeddedSearchEngine();
  await engine.replaceAll([{ id: "big-pack", name: "Big", status: "NodeStatusActive", versions, latest_version: versions[ROUNDS - 1] }]);
  const config = loadConfig({ DATA_DIR: join(dir, "data"), MIRROR_ARCHIVES: "on-demand", LOG_LEVEL: "silent" });
  const archives = await createArchiveService(config, logger, {
    engine,
    catalogVersion: () => catalogVersionOf({ state: "fresh", indexedAt: "x", nodes: 1 }),
  });
  const service = createServer(createApp({ engine, logger, isReady: () => true, archives }));
  const serviceUrl = await listen(service);
  try {
    const rounds: { baseline: number; pullThrough: number; stored: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const path = `/archives/big-pack/1.0.${r}/node.zip`;
      const row = {
        baseline: round(await download(`${upstreamUrl}/file`, size)),
        pullThrough: round(await download(`${serviceUrl}${path}`, size)),
        stored: round(await download(`${serviceUrl}${path}`, size)),
      };
      if (r > 0) rounds.push(row); // the first round fills the page cache
    }
    const mbps = {
      baseline: median(rounds.map((x) => x.baseline)),
      pullThrough: median(rounds.map((x) => x.pullThrough)),
      stored: median(rounds.map((x) => x.stored)),
    };
    const ratio = {
      pullThrough: median(rounds.map((x) => x.pullThrough / x.baseline)),
      stored: median(rounds.map((x) => x.stored / x.baseline)),
    };
    return {
      fileMiB: mib,
      baseline: "bare node:http sending the file with fs.createReadStream (the upstream itself)",
      rounds,
      mbps,
      ratio,
      figures: [
        figure(`archive pull-through (${mib} MiB, fetched, hashed, stored, streamed)`, mbps.pullThrough, "MB/s", {
          baseline: ["bare createReadStream server", mbps.baseline],
          ratio: ratio.pullThrough,
        }),
        figure(`archive from the store (${mib} MiB)`, mbps.stored, "MB/s", {
          baseline: ["bare createReadStream server", mbps.baseline],
          ratio: ratio.stored,
        }),
      ],
      summary: [
        `GET /archives/…/node.zip, ${mib} MiB: pull-through ${mbps.pullThrough} MB/s = ${ratio.pullThrough} of a bare createReadStream server (${mbps.baseline}); ` +
          `from the store ${mbps.stored} MB/s = ${ratio.stored}`,
      ],
    };
  } finally {
    await archives.close();
    service.close();
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runWhenMain(import.meta.url, () => run());
