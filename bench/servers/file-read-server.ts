import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";

/**
 * The download benches' baseline: a bare node:http server answering every GET with one file
 * (READ_FILE) through `fs.createReadStream`, whole or one `Range: bytes=a-b` (206). What a
 * download would cost if finding the asset, checking the key and writing headers cost nothing.
 */
const file = process.env.READ_FILE!;
createServer((req, res) => {
  if (req.url === "/ready") return void res.end("ready");
  const size = statSync(file).size;
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
  const [start, end] = m ? [Number(m[1]), Math.min(Number(m[2]), size - 1)] : [0, size - 1];
  res.writeHead(m ? 206 : 200, {
    "content-type": "application/octet-stream",
    "content-length": end - start + 1,
    ...(m && { "content-range": `bytes ${start}-${end}/${size}` }),
  });
  createReadStream(file, { start, end }).pipe(res);
}).listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1");
