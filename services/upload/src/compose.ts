import { join } from "node:path";
import { createJobQueue, serveJobs, type JobQueue } from "@app/jobs";
import type { Config, Logger } from "@app/platform";
import { keyFilePath } from "./adapters/keys/api-keys.ts";
import { createBlobStore } from "@app/blobs";
import type { ReferenceStore } from "./adapters/references/reference-store.ts";
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from "./adapters/limits/rate-limiter.ts";
import { ReloadingApiKeys } from "./adapters/keys/reloading-api-keys.ts";
import { uploadJobs } from "./jobs/upload-jobs.ts";
import { previewUrlSecret } from "./adapters/keys/preview-url-secret.ts";
import { uploadSettings, type UploadDeps } from "./http/deps.ts";
import { BlobDataStore } from "./adapters/tus/blob-data-store.ts";
import { TusServer } from "./http/tus-server.ts";
import { AssetLibrary } from "./library/asset-library.ts";

export interface UploadRuntime extends UploadDeps {
  isReady(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The one place the ReferenceStore implementation is chosen: PostgreSQL when DATABASE_URL is
 * set (shared by every upload process), else a SQLite file under DATA_DIR (one process).
 */
export async function createReferenceStore(config: Pick<Config, "DATABASE_URL" | "DATA_DIR">): Promise<ReferenceStore> {
  if (config.DATABASE_URL) {
    const { createPgReferenceStore } = await import("./adapters/references/pg-reference-store.ts");
    return createPgReferenceStore(config.DATABASE_URL);
  }
  const { createSqliteReferenceStore } = await import("./adapters/references/sqlite-reference-store.ts");
  return createSqliteReferenceStore(join(config.DATA_DIR, "assets.sqlite"));
}

/**
 * The resumable uploads' tus server over the blob store's partial uploads, making assets in the
 * reference store. One per process (its data store holds the hashers of the bytes this process
 * received); built here, and by the tests for the apps they make by hand.
 */
export function createTusServer(
  parts: Pick<UploadDeps, "blobs" | "references" | "logger"> & { settings: Pick<UploadDeps["settings"], "tusExpiryMs" | "assetMaxBytes"> },
): TusServer {
  return new TusServer({
    data: new BlobDataStore(parts.blobs.partials, parts.settings.tusExpiryMs),
    library: new AssetLibrary(parts.blobs, parts.references),
    maxBytes: parts.settings.assetMaxBytes,
    logger: parts.logger,
  });
}

/** The one place the rate limiter is chosen: counts in Redis (shared by every process on the prefix) when REDIS_URL is set, else in memory. */
export async function createRateLimiter(config: Config, logger: Logger): Promise<RateLimiter> {
  if (config.REDIS_URL) return createRedisRateLimiter({ url: config.REDIS_URL, prefix: config.QUEUE_PREFIX, logger });
  return createMemoryRateLimiter();
}

/**
 * Compose the upload service from validated config: blob store (swept of crash temporaries before
 * serving), keys (the key file is read again when it changes), the per-key rate limiter, and a job queue. A queue passed in is used as is (the gateway's); otherwise
 * one is created from config (BullMQ when REDIS_URL is set, the worker service then runs the
 * mask jobs; in-process otherwise). A queue it creates serves its own jobs where `serveJobs` says they run; the
 * gateway serves the jobs of the queue it passes in.
 */
export async function createUploadRuntime(config: Config, logger: Logger, opts: { queue?: JobQueue } = {}): Promise<UploadRuntime> {
  const blobs = await createBlobStore(config);
  await blobs.init();
  const swept = await blobs.sweepTemporaries();
  if (swept > 0) logger.warn({ swept }, "removed temporaries left by an earlier crash");

  const references = await createReferenceStore(config);
  await references.init();
  if (config.ASSET_LEGACY_OWNER) {
    const adopted = await references.adoptUnowned(config.ASSET_LEGACY_OWNER);
    if (adopted > 0)
      logger.info({ adopted, owner: config.ASSET_LEGACY_OWNER }, "asset records from before owners handed to ASSET_LEGACY_OWNER");
  }

  const keys = await ReloadingApiKeys.open({ file: keyFilePath(config), plaintext: config.API_KEYS, logger });
  if (keys.count === 0) {
    logger.warn(
      { keyFile: keyFilePath(config) },
      "no API keys configured: every upload request will be refused (pnpm apikey create --label NAME)",
    );
  }

  const ownQueue = !opts.queue;
  const queue = opts.queue ?? createJobQueue(config, { logger: logger.child({ component: "jobs" }) });
  // A queue passed in belongs to a process that mounts this service (the gateway), which serves its jobs.
  if (ownQueue) {
    const jobs = uploadJobs({ store: blobs, logger, concurrency: config.WORKER_CONCURRENCY, threadpool: config.UV_THREADPOOL_SIZE });
    await serveJobs(queue, jobs, { runner: "service", concurrency: config.WORKER_CONCURRENCY });
  }

  const limiter = await createRateLimiter(config, logger);
  const tus = createTusServer({
    blobs,
    references,
    logger,
    settings: { tusExpiryMs: config.TUS_EXPIRY, assetMaxBytes: config.ASSET_UPLOAD_MAX_BYTES },
  });

  const runtime: UploadRuntime = {
    blobs,
    references,
    keys,
    limiter,
    queue,
    tus,
    logger,
    settings: uploadSettings(config, await previewUrlSecret(config)),
    isReady: async () => (await blobs.ping()) && (await references.ping()) && (await queue.isReady()),
    async close() {
      clearInterval(sweeper);
      await keys.close();
      if (ownQueue) await queue.close();
      await limiter.close();
      await blobs.close();
      await references.close();
    },
  };
  // Resumable uploads past TUS_EXPIRY (0s: never), finished or not; every replica sweeps (removing one twice is harmless).
  const sweeper = setInterval(
    () => {
      tus.sweepExpired().then(
        (removed) => removed > 0 && logger.info({ removed }, "expired resumable uploads removed"),
        (err: unknown) => logger.warn({ err }, "resumable upload sweep failed"),
      );
    },
    Math.max(1_000, Math.min(config.TUS_EXPIRY, 15 * 60_000)),
  );
  sweeper.unref();
  return runtime;
}
