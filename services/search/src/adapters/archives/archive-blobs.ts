import type { Readable } from "node:stream";
import type { AssetRecord } from "@app/contracts";
import type { Config } from "@app/platform";

/**
 * What the archives need of the BlobStore port (content-addressed bytes under their blake3, in
 * the filesystem or S3, so replicas sharing a DATA_DIR or bucket share them): stage while
 * hashing, commit under the hash, stat and read with a range.
 */
export interface ArchiveBlobs {
  readonly kind: "fs" | "s3";
  init(): Promise<void>;
  stage(source: Readable): Promise<{ readonly hash: string; readonly size: number; commit(update: (existing: AssetRecord | null) => AssetRecord): Promise<unknown>; discard(): Promise<void> }>;
  stat(hash: string): Promise<{ size: number } | null>;
  read(hash: string, range?: { start: number; end: number }): Promise<Readable>;
  close(): Promise<void>;
}

/** The same store the uploads use (the one factory that chooses fs or S3 from the config). */
export async function createArchiveBlobs(config: Config): Promise<ArchiveBlobs> {
  const { createBlobStore } = await import("@app/blobs");
  const store = await createBlobStore(config);
  await store.init();
  return store;
}

/**
 * The sidecar every blob carries: an archive's says what it is; bytes someone also uploaded as
 * an asset keep that record as it was.
 */
export function archiveRecord(hash: string, size: number): (existing: AssetRecord | null) => AssetRecord {
  return (existing) => {
    if (existing) return existing;
    const now = new Date().toISOString();
    return { hash, ext: "zip", size, mime: "application/zip", first_uploaded_at: now, last_uploaded_at: now, tags: [] };
  };
}
