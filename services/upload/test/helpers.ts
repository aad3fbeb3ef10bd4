import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { crc32, deflateSync } from "node:zlib";
import { blake3 } from "@napi-rs/blake-hash";
import type { Express } from "express";
import { pino } from "pino";
import sharp from "sharp";
import { InProcessJobQueue, type JobQueue } from "@app/jobs";
import { loadApiKeys } from "../src/adapters/api-keys.ts";
import type { BlobStore } from "../src/adapters/blob-store.ts";
import { FsBlobStore } from "../src/adapters/fs-blob-store.ts";
import { createApp } from "../src/app.ts";
import { createMaskDeriveHandler } from "../src/jobs/mask-derive.ts";
import { DEFAULT_SETTINGS, type UploadDeps, type UploadSettings } from "../src/routes/deps.ts";

export const KEY = "test-key-0123456789abcdef";
export const OTHER_KEY = "second-key-with-another-label";

/** A store the tests can also ask for its temporaries. */
export type InspectableStore = BlobStore & { temporaries(): Promise<string[]> };

export interface TestApp {
  app: Express;
  deps: UploadDeps;
  store: InspectableStore;
  dataDir: string;
  logs: string[];
  close(): Promise<void>;
}

/** The upload service over a fresh temporary DATA_DIR, real filesystem and real sharp, logs captured. */
export async function makeTestApp(
  opts: { settings?: Partial<UploadSettings>; queue?: JobQueue; keys?: string; keyFile?: string; store?: InspectableStore } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), "upload-test-"));
  const store: InspectableStore = opts.store ?? new FsBlobStore(join(dataDir, "blobs"));
  await store.init();
  const logs: string[] = [];
  const capture = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: "trace", redact: ["req.headers['x-api-key']", "req.headers.authorization"] }, capture);
  const queue = opts.queue ?? new InProcessJobQueue();
  await queue.work({ "mask.derive": createMaskDeriveHandler({ store, logger }) });
  const keys = await loadApiKeys({ plaintext: opts.keys ?? `${KEY},${OTHER_KEY}`, ...(opts.keyFile && { file: opts.keyFile }) });
  const deps: UploadDeps = { store, keys, queue, logger, settings: { ...DEFAULT_SETTINGS, ...opts.settings } };
  return {
    app: createApp(deps),
    deps,
    store,
    dataDir,
    logs,
    async close() {
      await queue.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const blake3Hex = (b: Buffer): string => blake3(b).toString("hex");

export function solidPng(width: number, height: number, rgba: { r: number; g: number; b: number; alpha?: number }): Promise<Buffer> {
  const channels = rgba.alpha === undefined ? 3 : 4;
  return sharp({ create: { width, height, channels, background: { ...rgba, alpha: rgba.alpha ?? 1 } } }).png().toBuffer();
}

/** Distinct content every call (so tests never collide on a hash). */
export function noisePng(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } } })
    .png()
    .toBuffer();
}

/**
 * A PNG whose IHDR claims `width`×`height` with a valid CRC and a tiny IDAT: what a
 * decompression bomb looks like to a header probe.
 */
export function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grayscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.alloc(1024))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A hand-built multipart body, for bodies supertest will not write (truncated, odd headers). */
export function multipart(parts: { name: string; filename?: string; contentType?: string; body: Buffer | string }[], boundary = "----testboundary7MA4YWxk"): {
  body: Buffer;
  contentType: string;
} {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += "\r\n";
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function expectUploadError(body: unknown, code: string): void {
  const b = body as { code?: unknown; message?: unknown; error?: unknown };
  if (b.code !== code || b.error !== code || typeof b.message !== "string" || b.message.length === 0) {
    throw new Error(`expected {code: ${code}, error: ${code}, message}, got ${JSON.stringify(body)}`);
  }
}
