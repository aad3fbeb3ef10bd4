import { join } from "node:path";
import type { Config } from "@app/platform";
import { FsBlobStore } from "./fs-blob-store.ts";
import type { S3BlobStore } from "./s3-blob-store.ts";

/** Either implementation: tests inspect one (`list()`, `temporaries()`); services hold it as the BlobStore port. */
export type ChosenBlobStore = FsBlobStore | S3BlobStore;

/** The one place the BlobStore implementation is chosen: S3/MinIO when S3_ENDPOINT is set, else the filesystem under DATA_DIR. */
export async function createBlobStore(config: Config): Promise<ChosenBlobStore> {
  if (config.S3_ENDPOINT) {
    // Loaded only when chosen: the minio client adds ~6 MB of heap.
    const { S3BlobStore } = await import("./s3-blob-store.ts");
    return S3BlobStore.fromConfig(config);
  }
  return new FsBlobStore(join(config.DATA_DIR, "blobs"), { tempMaxAgeMs: config.TEMP_MAX_AGE_MS });
}
