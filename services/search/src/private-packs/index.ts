import { join } from "node:path";
import { Router } from "express";
import type { Config, Logger } from "@app/platform";
import type { SearchEngine } from "../adapters/search-engine.ts";
import { engineNamespace, type MirrorNamespace } from "./domain/mirror-namespace.ts";
import { privatePackErrors } from "./http/errors.ts";
import type { KeyVerifier } from "./http/key-access.ts";
import { publisherRoutes } from "./http/publisher-routes.ts";
import { PublisherService } from "./publisher-service.ts";
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
  engine: SearchEngine;
  keys: KeyVerifier;
  logger: Logger;
  mirror?: MirrorNamespace;
}

/** Teams' own packs, published into this registry beside the mirror. */
export function createPrivatePacks(deps: PrivatePackDeps): PrivatePacks {
  const publishers = new PublisherService(deps.repo, deps.mirror ?? engineNamespace(deps.engine));
  const router = Router();
  publisherRoutes(router, publishers, deps.keys);
  router.use(privatePackErrors(deps.logger));
  return { router, repo: deps.repo, publishers, close: () => deps.repo.close() };
}

/** The module over the configured store: what a composition root calls. */
export async function openPrivatePacks(config: Config, logger: Logger, deps: { engine: SearchEngine; keys: KeyVerifier }): Promise<PrivatePacks> {
  return createPrivatePacks({ ...deps, repo: await openPrivatePackStore(config), logger });
}

/** The SQLite file under DATA_DIR (embedded), or PostgreSQL when DATABASE_URL is set. */
export function openPrivatePackStore(config: { DATA_DIR: string; DATABASE_URL?: string | undefined }): Promise<PrivatePackRepository> {
  return openPrivatePackRepository({ databaseUrl: config.DATABASE_URL, sqliteFile: join(config.DATA_DIR, "private-packs.sqlite") });
}
