import { createServer, type IncomingMessage } from "node:http";
import { link, mkdir, mkdtemp, open, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Blake3Hasher } from "@napi-rs/blake-hash";
import { requiredEnv, testEnv } from "@app/testkit/env";
import { LOOP_RESOLUTION_MS } from "../lib/event-loop-delay.ts";
import { SINK_DURABILITIES, type SinkDurability } from "../lib/upload-sinks.ts";

/**
 * The upload benches' baseline: a bare node:http server taking each request body (POST, PUT or
 * PATCH; the raw bytes, multipart framing included, since parsing is part of what the service is
 * measured on) at one durability, SINK_DURABILITY:
 * - `hash`: blake3 over the bytes, written nowhere;
 * - `write`: blake3, and the bytes written to a temporary file through the page cache, renamed
 *   to the hash's name; answered without a sync;
 * - `sync`: as `write`, then the file fsynced, linked under its hash name and the directory
 *   fsynced before answering, which is what the filesystem BlobStore does for new content.
 * It answers `{hash, size}`; files are removed after the answer (the disk is not filled by rounds).
 * `GET /loop` answers its own event-loop delay since the last `GET /loop` (p99 and max, ms),
 * measured as the gateway's `/metrics` measures it, so a bench can read what the same uploads do
 * to a loop that does nothing else.
 */
const durability = testEnv.SINK_DURABILITY as SinkDurability;
if (!SINK_DURABILITIES.includes(durability)) throw new Error(`SINK_DURABILITY must be one of ${SINK_DURABILITIES.join(", ")}`);
const ownDir = testEnv.SINK_DIR === undefined;
const dir = testEnv.SINK_DIR ?? (await mkdtemp(join(tmpdir(), "bench-sink-")));
process.once("SIGTERM", () => {
  if (ownDir) void rm(dir, { recursive: true, force: true }).finally(() => process.exit(0));
  else process.exit(0);
});
await mkdir(join(dir, "tmp"), { recursive: true });
let seq = 0;
// prom-client's resolution (the gateway's `nodejs_eventloop_lag_*`): the histogram records each 10 ms timer's whole interval.
const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
loop.enable();

async function take(req: IncomingMessage): Promise<{ hash: string; size: number; path?: string }> {
  const hasher = new Blake3Hasher();
  let size = 0;
  if (durability === "hash") {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      hasher.update(chunk);
      size += chunk.length;
    }
    return { hash: hasher.digest("hex"), size };
  }
  const tmp = join(dir, "tmp", `${process.pid}-${seq++}`);
  const handle = await open(tmp, "wx");
  try {
    const hashing = new Writable({
      highWaterMark: 256 * 1024, // the service's writer's queue (packages/blobs/src/writeback-file-writer.ts)
      writev(chunks, done) {
        const buffers = chunks.map((c) => c.chunk as Buffer);
        for (const b of buffers) hasher.update(b);
        handle.writev(buffers).then(({ bytesWritten }) => {
          size += bytesWritten;
          done();
        }, done);
      },
    });
    await pipeline(req, hashing);
    const hash = hasher.digest("hex");
    const final = join(dir, hash);
    if (durability === "sync") await handle.sync();
    await handle.close();
    await link(tmp, final).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
    await unlink(tmp);
    if (durability === "sync") {
      const d = await open(dir, "r");
      await d.sync();
      await d.close();
    }
    return { hash, size, path: final };
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}

createServer((req, res) => {
  if (req.method === "GET" && req.url === "/loop") {
    const ms = (ns: number) => ns / 1e6;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max), resolutionMs: LOOP_RESOLUTION_MS }));
    loop.reset();
    return;
  }
  if (req.method === "GET" || req.method === "HEAD") {
    res.end("ready");
    return;
  }
  take(req).then(
    ({ hash, size, path }) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ hash, size, durability }), () => {
        if (path) void rm(path, { force: true });
      });
    },
    (err: Error) => {
      res.statusCode = 500;
      res.end(err.message);
    },
  );
}).listen(requiredEnv("PORT"), testEnv.HOST);
