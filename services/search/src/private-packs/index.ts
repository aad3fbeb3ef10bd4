import { join } from "node:path";
import { Router } from "express";
import type { Config, Logger } from "@app/platform";
import type { SearchEngine } from "../adapters/search-engine.ts";
import { engineNamespace, type MirrorNamespace } from "./domain/mirror-namespace.ts";
import { privatePackErrors } from "./http/errors.ts";
import type { KeyVerifier } from "./http/key-access.ts";
import { publisherRoutes } from "./http/publisher-routes.ts";
import { PublisherService } from "./publisher-service.ts";
import { PublishService, type PublishSettings } from "./publish-service.ts";
import { UploadService, type PackBlobs, type UploadSettings } from "./upload-service.ts";
import { publishRoutes } from "./http/publish-routes.ts";
import { createArchiveBlobs } from "../adapters/archives/archive-blobs.ts";
import type { PrivatePackRepository } from "./store/private-pack-repository.ts";
import { openPrivatePackRepository } from "./store/sql-private-pack-repository.ts";

export interface PrivatePacks {
  /** The write routes (publishers, tokens, publish, upload, status), each with its own error answers. */
  router: Router;
  repo: PrivatePackRepository;
  publishers: PublisherService;
  close(): Promise<void>;
}

export interface PrivatePackDeps {
  repo: PrivatePackRepository;
  blobs: PackBlobs;
  engine: SearchEngine;
  keys: KeyVerifier;
  logger: Logger;
  settings: PrivatePackSettings;
  mirror?: MirrorNamespace;
}

export interface PrivatePackSettings extends PublishSettings, UploadSettings {
  publicUrl?: string;
}

/** The settings from the validated config. */
export function privatePackSettings(config: Config): PrivatePackSettings {
  return {
    review: config.PUBLISH_REVIEW === "on",
    uploadTtlSeconds: config.PUBLISH_UPLOAD_TTL_SECONDS,
    body: { maxBytes: config.UPLOAD_MAX_BYTES, idleMs: config.BODY_TIMEOUT_MS },
    zip: { maxUnpackedBytes: config.PUBLISH_MAX_UNPACKED_BYTES, maxRatio: config.PUBLISH_MAX_RATIO, maxEntries: config.PUBLISH_MAX_ENTRIES },
    scanCommand: config.PUBLISH_SCAN_COMMAND,
    incomingDir: join(config.DATA_DIR, "private-packs", "incoming"),
    publicUrl: config.PUBLIC_URL,
  };
}

/** Teams' own packs, published into this registry beside the mirror. */
export function createPrivatePacks(deps: PrivatePackDeps): PrivatePacks {
  const mirror = deps.mirror ?? engineNamespace(deps.engine);
  const publishers = new PublisherService(deps.repo, mirror);
  const publish = new PublishService(deps.repo, mirror, deps.settings);
  const upload = new UploadService(deps.repo, deps.blobs, deps.settings, deps.logger);
  const router = Router();
  publisherRoutes(router, publishers, deps.keys);
  publishRoutes(router, { publish, upload, publicUrl: deps.settings.publicUrl });
  router.use(privatePackErrors(deps.logger));
  return { router, repo: deps.repo, publishers, close: () => deps.repo.close() };
}

/** The module over the configured store: what a composition root calls. */
export async function openPrivatePacks(config: Config, logger: Logger, deps: { engine: SearchEngine; keys: KeyVerifier }): Promise<PrivatePacks> {
  const blobs = await createArchiveBlobs(config);
  const packs = createPrivatePacks({ ...deps, repo: await openPrivatePackStore(config), blobs, logger, settings: privatePackSettings(config) });
  return { ...packs, close: async () => (await packs.close(), await blobs.close()) };
}

/** The SQLite file under DATA_DIR (embedded), or PostgreSQL when DATABASE_URL is set. */
export function openPrivatePackStore(config: { DATA_DIR: string; DATABASE_URL?: string | undefined }): Promise<PrivatePackRepository> {
  return openPrivatePackRepository({ databaseUrl: config.DATABASE_URL, sqliteFile: join(config.DATA_DIR, "private-packs.sqlite") });
}
