import { Readable } from "node:stream";
import type { Client } from "minio";
import type { ByteRange } from "./blob-store.ts";
import { BlobStoreUnavailableError } from "./blob-store.ts";

/** Whole object or an inclusive byte range. */
export async function readObject(client: Client, bucket: string, key: string, range?: ByteRange): Promise<Readable> {
  if (!range) return client.getObject(bucket, key);
  const length = range.end - range.start + 1;
  const body = await client.getPartialObject(bucket, key, range.start, length);
  // Never more than asked, even from a server that reads `bytes=0-0` as open-ended (s3rver does).
  return Readable.from(limitBytes(body, length));
}

/** Every object under `prefix`, with its last write. */
export async function listObjects(client: Client, bucket: string, prefix: string): Promise<{ name: string; lastModified: number }[]> {
  return guard(
    () =>
      new Promise<{ name: string; lastModified: number }[]>((resolve, reject) => {
        const out: { name: string; lastModified: number }[] = [];
        const stream = client.listObjectsV2(bucket, prefix, true);
        stream.on("data", (item) => {
          if (item.name) out.push({ name: item.name, lastModified: item.lastModified?.getTime() ?? 0 });
        });
        stream.on("error", reject);
        stream.on("end", () => resolve(out));
      }),
  );
}

async function* limitBytes(body: Readable, length: number): AsyncGenerator<Buffer> {
  let left = length;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    if (b.length >= left) {
      yield b.subarray(0, left);
      body.destroy();
      return;
    }
    left -= b.length;
    yield b;
  }
}

export function isNotFound(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === "NoSuchKey" || code === "NotFound" || code === "NoSuchObject";
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE", "EAI_AGAIN"]);

/** Backend outages become BlobStoreUnavailableError (503); anything else passes through. */
export function unavailable(err: unknown): unknown {
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  if (
    NETWORK_CODES.has(e.code ?? "") ||
    NETWORK_CODES.has(e.cause?.code ?? "") ||
    /ServiceUnavailable|SlowDown|InternalError/.test(e.code ?? "")
  ) {
    return new BlobStoreUnavailableError(`S3 is unavailable: ${e.code ?? e.message}`);
  }
  return err;
}

export async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw unavailable(err);
  }
}
