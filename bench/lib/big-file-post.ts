import { randomBytes } from "node:crypto";
import { postMultipart } from "./multipart-post.ts";

const BOUNDARY = "----benchBigFile";
const CHUNK = 1024 * 1024;

/**
 * `POST /api/assets`-shaped multipart body whose file is `mib` MiB of `seed`-distinct bytes,
 * streamed and never held whole; resolves with MB/s and the answer. `tags` and `filename` as
 * a model's upload unless given.
 */
export function postFile(
  url: string,
  path: string,
  mib: number,
  seed: string,
  key: string,
  opts: { tags?: string[]; filename?: string; mime?: string; fields?: Record<string, string> } = {},
): Promise<{ mbps: number; body: string }> {
  const tags = opts.tags ?? ["models", "model_type:checkpoints", "bench"];
  const extra = Object.entries(opts.fields ?? {})
    .map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join("");
  const head = Buffer.from(
    extra +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="tags"\r\n\r\n${JSON.stringify(tags)}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${opts.filename ?? "model.safetensors"}"\r\nContent-Type: ${opts.mime ?? "application/octet-stream"}\r\n\r\n`,
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
    return { mbps: (mib * CHUNK) / 1e6 / ((performance.now() - started) / 1000), body };
  });
}
