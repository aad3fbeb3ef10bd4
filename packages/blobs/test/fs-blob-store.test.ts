import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, readdir, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BlobNotFoundError } from "../src/blob-store.ts";
import { FsBlobStore } from "../src/fs-blob-store.ts";
import { describeBlobStoreConformance } from "./blob-store-conformance.ts";

describeBlobStoreConformance("filesystem", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fs-blob-"));
  const root = join(dir, "blobs");
  const store = new FsBlobStore(root);
  return {
    store,
    temporaries: async () => readdir(join(root, "tmp")).catch(() => []),
    plantTemporary: async (name) => writeFile(join(root, "tmp", name), "partial"),
    sibling: ({ tempMaxAgeMs }) => new FsBlobStore(root, { tempMaxAgeMs }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

/** This process's descriptors open on `path` (/proc/self/fd). */
function descriptorsOf(path: string): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
    } catch {
      return false; // closed while listing
    }
  }).length;
}

async function drain(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// Reads keep a blob's descriptor open between them (open-blob-files.ts): what that must not change.
describe("FsBlobStore: descriptors kept between reads", () => {
  let dir: string;
  let store: FsBlobStore;
  let hash: string;
  const bytes = randomBytes(2 * 1024 * 1024 + 3);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "fs-blob-open-"));
    store = new FsBlobStore(join(dir, "blobs"));
    await store.init();
    const staged = await store.stage(Readable.from([bytes]));
    await staged.commit(() => ({
      hash: staged.hash,
      ext: "bin",
      size: bytes.length,
      mime: "application/octet-stream",
      first_uploaded_at: new Date().toISOString(),
      last_uploaded_at: new Date().toISOString(),
      tags: [],
    }));
    hash = staged.hash;
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a blob removed from disk behind the store's back is not found, though it was just read", async () => {
    expect((await drain(await store.read(hash))).equals(bytes)).toBe(true);
    expect(await store.stat(hash)).toMatchObject({ size: bytes.length });
    await unlink(store.localPath(hash)!);
    expect(await store.stat(hash)).toBeNull();
    await expect(store.read(hash)).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(store.read(hash, { start: 0, end: 9 })).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it("holds one descriptor per blob however many read it, and none once closed, however the reads ended", async () => {
    const path = store.localPath(hash)!;
    const whole = await Promise.all(Array.from({ length: 6 }, () => store.read(hash)));
    const abandoned = await store.read(hash, { start: 100, end: 2_000_000 });
    expect(descriptorsOf(path)).toBe(1);
    abandoned.destroy();
    for (const got of await Promise.all(whole.map(drain))) expect(got.equals(bytes)).toBe(true);
    expect(descriptorsOf(path)).toBe(1);
    await store.close();
    expect(descriptorsOf(path)).toBe(0);
  });

  it("a blob read while the store closes is read whole, and its descriptor closed after", async () => {
    const path = store.localPath(hash)!;
    const reading = await store.read(hash);
    await store.close();
    expect((await drain(reading)).equals(bytes)).toBe(true);
    // The last reader hands the descriptor back and its close(2) runs on libuv's thread pool: wait for it, however slow the machine.
    await vi.waitFor(() => expect(descriptorsOf(path)).toBe(0), { timeout: 10_000 });
  });
});
