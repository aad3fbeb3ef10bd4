export { createApp, createRouter } from "./app.ts";
export { createUploadDeps, createBlobStore, createReferenceStore, createRateLimiter, type UploadRuntime } from "./compose.ts";
export { createMaskDeriveHandler, type MaskDeriveDeps } from "./jobs/mask-derive.ts";
export type { UploadDeps, UploadSettings } from "./routes/deps.ts";
export { DEFAULT_SETTINGS } from "./routes/deps.ts";
export type { BlobStore, StagedBlob, CommitResult, ByteRange, BlobStat } from "./adapters/blob-store.ts";
export { BlobNotFoundError, BlobStoreUnavailableError } from "./adapters/blob-store.ts";
export { FsBlobStore } from "./adapters/fs-blob-store.ts";
export { loadApiKeys, createApiKey, revokeApiKeys, digestKey, keyFilePath, parseKeyFile, type ApiKey, type ApiKeys } from "./adapters/api-keys.ts";
export { ReloadingApiKeys } from "./adapters/reloading-api-keys.ts";
export { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter, type Decision } from "./adapters/rate-limiter.ts";
export { LIMIT_NAMES, NO_LIMITS, parseKeyLimits, type KeyLimits, type RateLimits } from "./domain/key-limits.ts";
// The S3 store is loaded only when S3_ENDPOINT selects it (createBlobStore): the minio client adds ~6 MB of heap.
export type { S3BlobStore, S3BlobStoreOptions } from "./adapters/s3-blob-store.ts";
export { parseOriginalRef } from "./domain/original-ref.ts";
export { parseAssetName } from "./domain/naming.ts";
export type { ReferenceStore, AssetReference } from "./adapters/reference-store.ts";
export { createSqliteReferenceStore } from "./adapters/sqlite-reference-store.ts";
export { metadataConditions, presentEntry, valueEntry } from "./domain/metadata-index.ts";
