import { createBlobStore, type BlobStore, type Sidecar, type SidecarUpdate } from "@app/blobs";
import type { Config } from "@app/platform";

/**
 * What the archives need of the BlobStore port (content-addressed bytes under their blake3, in
 * the filesystem or S3, so replicas sharing a DATA_DIR or bucket share them): stage while
 * hashing, commit under the hash, stat and read with a range.
 */
export type ArchiveBlobs = Pick<BlobStore, "kind" | "init" | "stage" | "stat" | "read" | "close">;

/** The same store the uploads use (`@app/blobs` chooses fs or S3 from the config). */
export async function createArchiveBlobs(config: Config): Promise<ArchiveBlobs> {
  const store = await createBlobStore(config);
  await store.init();
  return store;
}

/**
 * The sidecar every blob carries: an archive's says what it is; bytes someone also uploaded as
 * an asset keep their sidecar as it was.
 */
export function archiveSidecar(hash: string, size: number): SidecarUpdate {
  return (existing): Sidecar => {
    if (existing) return existing;
    const now = new Date().toISOString();
    return { hash, ext: "zip", size, mime: "application/zip", first_uploaded_at: now, last_uploaded_at: now, tags: [] };
  };
}
