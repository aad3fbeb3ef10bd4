export { createApp, createRouter } from "./app.ts";
export { createUploadDeps, createReferenceStore, createRateLimiter, type UploadRuntime } from "./compose.ts";
export { createMaskDeriveHandler, type MaskDeriveDeps } from "./jobs/mask-derive.ts";
export type { UploadDeps, UploadSettings } from "./routes/deps.ts";
export { DEFAULT_SETTINGS } from "./routes/deps.ts";
// The blob store lives in @app/blobs; these stay for the services that import it from here.
export { createBlobStore, FsBlobStore, BlobNotFoundError, BlobStoreUnavailableError } from "@app/blobs";
export type { BlobStore, StagedBlob, CommitResult, ByteRange, BlobStat, S3BlobStore, S3BlobStoreOptions } from "@app/blobs";
export { loadApiKeys, createApiKey, revokeApiKeys, digestKey, keyFilePath, parseKeyFile, type ApiKey, type ApiKeys } from "./adapters/keys/api-keys.ts";
export { ReloadingApiKeys } from "./adapters/keys/reloading-api-keys.ts";
export { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter, type Decision } from "./adapters/limits/rate-limiter.ts";
export { LIMIT_NAMES, NO_LIMITS, parseKeyLimits, type KeyLimits, type RateLimits } from "./domain/key-limits.ts";
export { parseOriginalRef } from "./domain/original-ref.ts";
export { parseAssetName } from "./domain/naming.ts";
export type { ReferenceStore } from "./adapters/references/reference-store.ts";
export type { AssetReference } from "./domain/asset-reference.ts";
export { createSqliteReferenceStore } from "./adapters/references/sqlite-reference-store.ts";
export { metadataConditions, presentEntry, valueEntry } from "./domain/metadata-index.ts";
