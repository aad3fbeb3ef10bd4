import type { JobHandlers } from "@app/jobs";
import type { Config, Logger } from "@app/platform";
import { catalogVersionOf, createArchiveService } from "./adapters/archives/archive-service.ts";
import { importedCatalogSource } from "./adapters/bundle/bundle-source.ts";
import { createSearchRoutes, searchReadyDetails, type SearchRoutes } from "./app.ts";
import { createSearchEngine, createSearchRuntime, type SearchRuntimeOptions } from "./compose.ts";
import type { KeyVerifier } from "./private-packs/http/key-access.ts";
import { openPrivatePacks } from "./private-packs/index.ts";
import { searchJobs } from "./jobs/search-jobs.ts";

/**
 * The search service as a process hosts it (its own main, the gateway, the worker): the routes
 * to mount, readiness, the jobs it owns, and how to stop everything it started.
 */
export interface SearchService {
  /** The router (with its own error handling) and the list routes answered ahead of Express; built on the first call. */
  routes(): SearchRoutes;
  /** True once start-up's local part is over (snapshot restored, a file source indexed); never waits on the network. */
  isReady(): boolean;
  /** What search adds to /readyz: the catalog's state, with the archives' under `catalog.archives`. */
  readyDetails(): Record<string, unknown>;
  /** The jobs this service owns, for the queue of whichever process runs them. */
  jobs: Pick<JobHandlers, "catalog.reindex">;
  close(): Promise<void>;
}

/**
 * The one entry to the search service. A server ("server", the default) imports a bundle source
 * into DATA_DIR first, then starts the engine, the catalog (with its refresh queue) and the node
 * archives. A writer (a worker) only reindexes: no bundle import, no archives, nothing served.
 */
export async function createSearchService(config: Config, logger: Logger, opts: SearchServiceOptions = {}): Promise<SearchService> {
  const serves = (opts.role ?? "server") === "server";
  const source = serves ? await importedCatalogSource(config, logger) : config.CATALOG_SOURCE;
  // Teams' private packs are laid over the mirror in the engine every catalog is indexed through
  // (a writer too: with Meilisearch, its reindex is what the servers serve). A bundle's private
  // packs were written into DATA_DIR by the import just above.
  const inner = opts.engine ?? (await createSearchEngine(config));
  const privatePacks = await openPrivatePacks(config, logger.child({ component: "private-packs" }), {
    inner,
    keys: opts.publisherKeys ?? NO_PUBLISHER_KEYS,
    watch: serves,
  });
  const runtime = await createSearchRuntime(config, logger, { ...opts, source, engine: privatePacks.engine });
  const archives = serves
    ? await createArchiveService(config, logger.child({ component: "archives" }), {
        engine: privatePacks.engine.mirrorOnly(),
        catalogVersion: () => catalogVersionOf(runtime.catalogStatus()),
      })
    : undefined;
  let routes: SearchRoutes | undefined;
  return {
    routes: () => (routes ??= createSearchRoutes({ ...runtime, archives, privatePacks })),
    isReady: () => runtime.isReady(),
    readyDetails: () => ({
      ...searchReadyDetails({ catalogStatus: runtime.catalogStatus, archives }),
      privatePacks: privatePacks.status(),
    }),
    jobs: searchJobs(runtime),
    async close() {
      // The archives first: their prefetch reads the engine the runtime closes.
      await archives?.close();
      await runtime.close();
      await privatePacks.close();
    },
  };
}

export interface SearchServiceOptions extends SearchRuntimeOptions {
  /** The API keys whose principals own publishers (the gateway passes the upload service's); none: publishers are managed with `pnpm publisher`. */
  publisherKeys?: KeyVerifier;
}

/** A process given no API keys manages no publishers over HTTP. */
const NO_PUBLISHER_KEYS: KeyVerifier = { verify: () => null };
