import { join } from "node:path";
import { Router } from "express";
import type { BlobStore } from "@app/blobs";
import type { Config, Logger } from "@app/platform";
import { createArchiveBlobs } from "../adapters/archives/archive-blobs.ts";
import { bundlePrivatePacksPath } from "../adapters/bundle/bundle-import.ts";
import { importPrivatePacks } from "./bundle.ts";
import type { SearchEngine } from "../ports/search-engine.ts";
import { publicBase, type ArchiveLinks } from "../domain/archive-links.ts";
import { privateArchiveRoute } from "./http/archive-route.ts";
import { privatePackErrors } from "./http/errors.ts";
import type { KeyVerifier } from "./http/key-access.ts";
import { publishRoutes } from "./http/publish-routes.ts";
import { publisherRoutes } from "./http/publisher-routes.ts";
import { PrivateOverlayEngine, type OverlayStatus } from "./private-overlay-engine.ts";
import { PublishService, type PublishSettings } from "./publish-service.ts";
import { PublisherService } from "./publisher-service.ts";
import type { PrivatePackRepository } from "./store/private-pack-repository.ts";
import { openPrivatePackRepository } from "./store/sql-private-pack-repository.ts";
import { UploadService, type UploadSettings } from "./upload-service.ts";
import { VersionAdminService } from "./version-admin-service.ts";
import { versionAdminRoutes } from "./http/version-admin-routes.ts";

export interface PrivatePacks {
  /** The write routes (publishers, tokens, publish, upload) and the private archives, each with its own error answers. */
  router: Router;
  /** The search engine with the private packs over the mirror: what the catalog fills and every read route reads. */
  engine: PrivateOverlayEngine;
  repo: PrivatePackRepository;
  publishers: PublisherService;
  /** A version's `downloadUrl`: a private one's made absolute on this instance, the mirror's as `inner` answers it. */
  links(inner: ArchiveLinks): ArchiveLinks;
  status(): OverlayStatus;
  close(): Promise<void>;
}

export type PackBlobs = Pick<BlobStore, "stage" | "read">;

export interface PrivatePackDeps {
  repo: PrivatePackRepository;
  blobs: PackBlobs;
  /** The engine the mirror is indexed in; the private packs are laid over it. */
  inner: SearchEngine;
  keys: KeyVerifier;
  logger: Logger;
  settings: PrivatePackSettings;
}

export interface PrivatePackSettings extends PublishSettings, UploadSettings {
  publicUrl?: string;
}

/** How often a process reads the private packs' revision, to serve what another replica published. */
const REVISION_POLL_MS = 2000;

/** The settings from the validated config. */
export function privatePackSettings(config: Config): PrivatePackSettings {
  return {
    review: config.PUBLISH_REVIEW === "on",
    uploadTtlSeconds: config.PUBLISH_UPLOAD_TTL_SECONDS,
    body: { maxBytes: config.UPLOAD_MAX_BYTES, idleMs: config.BODY_TIMEOUT_MS },
    zip: {
      maxUnpackedBytes: config.PUBLISH_MAX_UNPACKED_BYTES,
      maxRatio: config.PUBLISH_MAX_RATIO,
      maxEntries: config.PUBLISH_MAX_ENTRIES,
    },
    scanCommand: config.PUBLISH_SCAN_COMMAND,
    incomingDir: join(config.DATA_DIR, "private-packs", "incoming"),
    publicUrl: config.PUBLIC_URL,
  };
}

/** Teams' own packs, published into this registry beside the mirror. Call `engine.refreshPrivate()` once to index them. */
export function createPrivatePacks(deps: PrivatePackDeps): PrivatePacks {
  const engine = new PrivateOverlayEngine(deps.inner, deps.repo, deps.logger);
  const publishers = new PublisherService(deps.repo, engine.namespace);
  const publish = new PublishService(deps.repo, engine.namespace, deps.settings);
  const upload = new UploadService(deps.repo, deps.blobs, deps.settings, deps.logger, () => engine.refreshPrivate());
  const router = Router();
  publisherRoutes(router, publishers, deps.keys);
  publishRoutes(router, { publish, upload, publicUrl: deps.settings.publicUrl });
  versionAdminRoutes(router, new VersionAdminService(deps.repo, () => engine.refreshPrivate()), deps.keys);
  privateArchiveRoute(router, deps.repo, deps.blobs);
  router.use(privatePackErrors(deps.logger));
  return {
    router,
    engine,
    repo: deps.repo,
    publishers,
    links: (inner) => ({
      version: (req, v) =>
        v.downloadUrl?.startsWith("/archives/")
          ? { ...v, downloadUrl: `${publicBase(req, deps.settings.publicUrl)}${v.downloadUrl}` }
          : inner.version(req, v),
    }),
    status: () => engine.status(),
    close: () => deps.repo.close(),
  };
}

/** The module over the configured store and blob store, its packs indexed, watching for other replicas' publishes. */
export async function openPrivatePacks(
  config: Config,
  logger: Logger,
  deps: { inner: SearchEngine; keys: KeyVerifier; watch: boolean },
): Promise<PrivatePacks> {
  const blobs = await createArchiveBlobs(config);
  const repo = await openPrivatePackStore(config);
  // A bundle's private packs (CATALOG_SOURCE=<bundle.tar>, imported before this) join the database's.
  const fromBundle = await importPrivatePacks(
    bundlePrivatePacksPath(config.DATA_DIR),
    repo,
    async (hash) => (await blobs.stat(hash)) !== null,
    logger,
  );
  if (fromBundle > 0) logger.info({ versions: fromBundle }, "private pack versions added from the bundle");
  const packs = createPrivatePacks({ ...deps, repo, blobs, logger, settings: privatePackSettings(config) });
  await packs.engine.refreshPrivate();
  if (deps.watch) packs.engine.watch(REVISION_POLL_MS);
  return { ...packs, close: async () => (await packs.close(), await blobs.close()) };
}

/** The asset records' database: its SQLite file under DATA_DIR (embedded), or PostgreSQL when DATABASE_URL is set. */
export function openPrivatePackStore(config: { DATA_DIR: string; DATABASE_URL?: string | undefined }): Promise<PrivatePackRepository> {
  return openPrivatePackRepository({ databaseUrl: config.DATABASE_URL, sqliteFile: join(config.DATA_DIR, "assets.sqlite") });
}
