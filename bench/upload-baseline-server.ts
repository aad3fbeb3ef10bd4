import { createServer } from "node:http";
import { Blake3Hasher } from "@napi-rs/blake-hash";

/**
 * The upload baseline: a bare node:http server that streams each request body through blake3
 * to nowhere and answers the hash. What an upload would cost if parsing, probing and storing
 * cost nothing.
 */
createServer((req, res) => {
  if (req.method !== "POST") {
    res.end("ready");
    return;
  }
  const hasher = new Blake3Hasher();
  req.on("data", (chunk: Buffer) => hasher.update(chunk));
  req.on("end", () => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ hash: hasher.digest("hex") }));
  });
}).listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1");
