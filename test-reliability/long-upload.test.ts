import { request as httpRequest } from "node:http";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Blake3Hasher } from "@napi-rs/blake-hash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY } from "@app/testkit/assets";
import { record } from "@app/testkit/figures";
import { testEnv } from "@app/testkit/env";
import { SCRIPTS, sleep, startService, tempDir, type Service } from "@app/testkit/processes";

/**
 * A long upload: 320 MiB sent at 1 MB/s (about 335 s, past Node's old 300 s request
 * limit) through the gateway to a standalone upload service (both servers on the path), lands
 * with its hash right. LONG_UPLOAD_MIB and LONG_UPLOAD_BPS change the size and the pace.
 */
const MiB = 1024 * 1024;
const SIZE = testEnv.LONG_UPLOAD_MIB * MiB;
const BYTES_PER_SECOND = testEnv.LONG_UPLOAD_BPS;
let dir: string;
let upload: Service;
let gw: Service;

beforeAll(async () => {
  dir = await tempDir("long-upload");
  upload = await startService(SCRIPTS.upload, { DATA_DIR: join(dir, "data"), API_KEYS: KEY });
  gw = await startService(SCRIPTS.gateway, { DATA_DIR: join(dir, "gw"), API_KEYS: KEY, UPLOAD_URL: upload.url });
});
afterAll(async () => {
  await gw?.stop();
  await upload?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** POST /api/assets whose file part is `size` bytes of a fixed pattern, written at `bytesPerSecond` in 64 KiB steps. */
function slowUpload(
  base: string,
  size: number,
  bytesPerSecond: number,
): Promise<{ status: number; body: Record<string, unknown>; seconds: number; hash: string }> {
  const head = Buffer.from(
    '--bnd\r\nContent-Disposition: form-data; name="tags"\r\n\r\nmodels,model_type:checkpoints\r\n--bnd\r\nContent-Disposition: form-data; name="file"; filename="slow.safetensors"\r\nContent-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from("\r\n--bnd--\r\n");
  const step = 64 * 1024;
  const block = Buffer.alloc(step);
  for (let i = 0; i < step; i++) block[i] = (i * 131 + 7) & 0xff;
  const hasher = new Blake3Hasher();
  const started = Date.now();
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: "/api/assets",
      headers: {
        "x-api-key": KEY,
        "content-type": "multipart/form-data; boundary=bnd",
        "content-length": head.length + size + tail.length,
      },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(text),
          seconds: (Date.now() - started) / 1000,
          hash: hasher.digest("hex"),
        }),
      );
    });
    req.on("error", reject);
    void (async () => {
      req.write(head);
      for (let sent = 0; sent < size;) {
        const chunk = block.subarray(0, Math.min(step, size - sent));
        hasher.update(chunk);
        sent += chunk.length;
        if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
        // Paced against the clock, so the average stays at the rate however the timers drift.
        const due = started + (sent / bytesPerSecond) * 1000;
        if (due > Date.now()) await sleep(due - Date.now());
      }
      req.end(tail);
    })().catch(reject);
  });
}

describe("a long, steady upload", () => {
  it(`${SIZE / MiB} MiB at ${BYTES_PER_SECOND / 1e6} MB/s through the gateway and the standalone upload service lands with its hash`, async () => {
    const res = await slowUpload(gw.url, SIZE, BYTES_PER_SECOND);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.asset_hash).toBe(`blake3:${res.hash}`);
    expect(res.body.size).toBe(SIZE);
    // The stored bytes read back hash the same.
    const content = await fetch(`${gw.url}/api/assets/${String(res.body.id)}/content`, { headers: { "X-API-Key": KEY } });
    const back = new Blake3Hasher();
    for await (const chunk of content.body!) back.update(Buffer.from(chunk));
    expect(back.digest("hex")).toBe(res.hash);
    record("long upload", { mib: SIZE / MiB, seconds: res.seconds, bytesPerSecond: BYTES_PER_SECOND });
  });
});
