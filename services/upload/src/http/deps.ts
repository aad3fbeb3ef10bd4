import { randomBytes } from "node:crypto";
import type { JobQueue } from "@app/jobs";
import { loadConfig, type Config, type Logger } from "@app/platform";
import type { ApiKeys } from "../adapters/keys/api-keys.ts";
import type { BlobStore } from "@app/blobs";
import type { ReferenceStore } from "../adapters/references/reference-store.ts";
import type { RateLimiter } from "../adapters/limits/rate-limiter.ts";
import type { PreviewUrls } from "../domain/asset-view.ts";
import type { TusServer } from "./tus-server.ts";
import type { RateLimits } from "../domain/key-limits.ts";

export interface UploadSettings {
  maxBytes: number;
  /** POST /api/assets: its own limit (ASSET_UPLOAD_MAX_BYTES), as model files are gigabytes. */
  assetMaxBytes: number;
  bodyTimeoutMs: number;
  /** TUS_EXPIRY: a resumable upload is removed this long after its creation. */
  tusExpiryMs: number;
  maskJobTimeoutMs: number;
  /** S3 stores: answer /view with a redirect to a presigned URL, or stream through this service. */
  viewMode: "redirect" | "stream";
  presignSeconds: number;
  /** RATE_LIMIT_*: per-key limits for keys that do not name their own (0 = none). */
  rateLimits: RateLimits;
  /** How `preview_url`s are signed (PREVIEW_URL_SECRET, PREVIEW_URL_TTL_SECONDS). */
  previewUrls: PreviewUrls;
}

/** Everything the upload routes need; built by `createUploadRuntime` or by hand in tests. */
export interface UploadDeps {
  /** The bytes, each with its sidecar (@app/blobs). */
  blobs: BlobStore;
  /** Asset references (the asset API's records); uploads add theirs. */
  references: ReferenceStore;
  keys: ApiKeys;
  queue: JobQueue;
  logger: Logger;
  settings: UploadSettings;
  /** The resumable uploads' server and data store (compose.ts: `createTusServer`), shared by the tus routes and the expiry sweep. */
  tus: TusServer;
  /** Where per-key counts are kept (compose.ts: Redis when REDIS_URL is set); this process's memory when absent. */
  limiter?: RateLimiter;
  /** Readiness of the backends (blobs, references, queue); defaults to the blob store's ping. */
  isReady?: () => Promise<boolean>;
}

/** The upload settings a config gives, with the secret `preview_url`s are signed with. */
export function uploadSettings(config: Config, previewUrlSecret: Buffer): UploadSettings {
  return {
    maxBytes: config.UPLOAD_MAX_BYTES,
    assetMaxBytes: config.ASSET_UPLOAD_MAX_BYTES,
    bodyTimeoutMs: config.BODY_TIMEOUT_MS,
    tusExpiryMs: config.TUS_EXPIRY,
    maskJobTimeoutMs: config.MASK_JOB_TIMEOUT_MS,
    viewMode: config.S3_VIEW_MODE,
    presignSeconds: config.S3_PRESIGN_SECONDS,
    rateLimits: {
      upload_rpm: config.RATE_LIMIT_UPLOAD_RPM,
      upload_mbpm: config.RATE_LIMIT_UPLOAD_MBPM,
      assets_rpm: config.RATE_LIMIT_ASSETS_RPM,
    },
    previewUrls: { secret: previewUrlSecret, ttlSeconds: config.PREVIEW_URL_TTL_SECONDS },
  };
}

/**
 * The schema's defaults, for deps built by hand (tests), with a secret of this process's own:
 * its URLs are good only here (compose.ts gives the configured one).
 */
export const DEFAULT_SETTINGS: UploadSettings = uploadSettings(loadConfig({}), randomBytes(32));
