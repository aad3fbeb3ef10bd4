import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { requiredEnv, testEnv } from "@app/testkit/env";

/**
 * The download benches' baseline: a bare node:http server answering every GET with one file
 * (READ_FILE) through `fs.createReadStream`, whole or one `Range: bytes=a-b` (206). What a
 * download would cost if finding the asset, checking the key and choosing headers cost nothing.
 * Like with like: it reads in the store's chunk (READ_CHUNK_KIB, 1 MiB as FsBlobStore reads;
 * the stream's default is 64 KiB) and sends the headers the service sends with stored bytes.
 */
const file = requiredEnv("READ_FILE");
const highWaterMark = testEnv.READ_CHUNK_KIB * 1024;
createServer((req, res) => {
  if (req.url === "/ready") return void res.end("ready");
  const size = statSync(file).size;
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
  const [start, end] = m ? [Number(m[1]), Math.min(Number(m[2]), size - 1)] : [0, size - 1];
  res.writeHead(m ? 206 : 200, {
    etag: `"${file.slice(-64)}"`,
    "cache-control": "public, max-age=31536000, immutable",
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
    "content-type": "application/octet-stream",
    "content-disposition": "attachment; filename*=UTF-8''clip.mp4",
    "content-length": end - start + 1,
    ...(m && { "content-range": `bytes ${start}-${end}/${size}` }),
  });
  createReadStream(file, { start, end, highWaterMark }).pipe(res);
}).listen(requiredEnv("PORT"), testEnv.HOST);
