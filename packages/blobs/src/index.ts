export {
  BlobNotFoundError,
  BlobStoreUnavailableError,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type CommitResult,
  type SidecarUpdate,
  type StageOptions,
  type StagedBlob,
} from "./blob-store.ts";
export { createBlobStore, type ChosenBlobStore } from "./create-blob-store.ts";
export { FsBlobStore } from "./fs-blob-store.ts";
// The S3 store is loaded only when S3_ENDPOINT selects it (createBlobStore, or `@app/blobs/s3`): the minio client adds ~6 MB of heap.
export type { S3BlobStore, S3BlobStoreOptions } from "./s3-blob-store.ts";
export { HASH_RE } from "./hash.ts";
export { UPLOAD_ID_RE, type AssembledUpload, type PartialUpload, type PartialUploads } from "./blob-store.ts";
export { MAX_SIDECAR_TAGS, mergeSidecar, Sidecar, type NewContent } from "./sidecar.ts";
export { KeyedMutex } from "./keyed-mutex.ts";
export { temporaryName } from "./temporary-names.ts";
