import { InProcessJobQueue, queueKindFor, runsJobsHere, serveJobs } from "@app/jobs";
import type { CatalogSourceConfig, Config, Logger } from "@app/platform";
import type { MirrorOptions } from "./adapters/registry/mirror-options.ts";
import { bundleCatalogPath } from "./adapters/bundle/bundle-import.ts";
import { KeptVersionClasses, versionClassesDir, type VersionClasses } from "./adapters/registry/version-classes.ts";
import { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
import type { SearchEngine } from "./ports/search-engine.ts";
import { Catalog } from "./catalog/catalog.ts";
import { refreshRetry } from "./catalog/catalog-refresh.ts";
import type { CatalogStatus } from "./catalog/catalog-status.ts";
import type { Reindex } from "./catalog/reindex.ts";
import type { CatalogRole } from "./catalog/role.ts";
import { refreshJobs } from "./jobs/search-jobs.ts";

/** The search service running: its engine, its catalog, and how to stop both. */
export interface SearchRuntime {
  engine: SearchEngine;
  logger: Logger;
  /** True once the local part of start-up is over (snapshot restored, a file source indexed); never waits on the network. */
  isReady(): boolean;
  /** Resolves once that local part is over (indexed, or failed and logged). */
  started: Promise<void>;
  /** What /readyz reports about the catalog. */
  catalogStatus(): CatalogStatus;
  /** Read a source, swap the new index in (and, embedded, persist it for restarts and other processes). */
  reindex: Reindex;
  /** Other versions' classes: kept, and read through from the mirrored registry; kept only for a bundle's catalog; none for another file. */
  versionClasses?: VersionClasses;
  close(): Promise<void>;
}

export interface SearchRuntimeOptions {
  /** What this process does with the catalog (`catalog/role.ts`); "server" by default. */
  role?: CatalogRole;
  engine?: SearchEngine;
  /** How registries are mirrored (tests shorten the timeouts). */
  mirror?: MirrorOptions;
  /** The source served, when not CATALOG_SOURCE as configured (a bundle's: the catalog file it was imported to). */
  source?: CatalogSourceConfig;
}

/** The one place that chooses the engine: Meilisearch when MEILI_URL is set, else the embedded index. */
export async function createSearchEngine(config: Config): Promise<SearchEngine> {
  if (config.MEILI_URL) {
    const { MeiliSearchEngine } = await import("./adapters/meilisearch/meili-engine.ts");
    return new MeiliSearchEngine({ host: config.MEILI_URL, apiKey: config.MEILI_API_KEY, index: config.MEILI_INDEX });
  }
  return new EmbeddedSearchEngine();
}

/** The composition root: the engine chosen from config, and the catalog that keeps it filled. */
export async function createSearchRuntime(config: Config, logger: Logger, opts: SearchRuntimeOptions = {}): Promise<SearchRuntime> {
  const engine = opts.engine ?? (await createSearchEngine(config));
  const role = opts.role ?? "server";
  // A server's refresh runs on a queue of its own: one read at a time, retried as a refresh is, apart
  // from request-path jobs. At scale (Redis) the worker runs the one scheduler (see the worker's main.ts).
  const refreshQueue =
    role === "server" && runsJobsHere("service", queueKindFor(config))
      ? new InProcessJobQueue({ concurrency: 1, ...refreshRetry(opts.mirror) })
      : undefined;
  const source = opts.source ?? config.CATALOG_SOURCE;
  const catalog = new Catalog({ config, logger, engine, role, source, mirror: opts.mirror, refreshQueue });
  // Its handlers are registered at once (before the catalog's start can reach the queue).
  if (refreshQueue) await serveJobs(refreshQueue, refreshJobs(catalog), { runner: "service" });
  const kept = versionClassesDir(config.DATA_DIR);
  // A bundle's catalog (CATALOG_SOURCE=<bundle.tar>, imported) answers the classes the bundle carried.
  const bundled = source.kind === "file" && source.path === bundleCatalogPath(config.DATA_DIR);
  const versionClasses =
    source.kind === "registry" ? new KeptVersionClasses(kept, source.url) : bundled ? new KeptVersionClasses(kept) : undefined;
  return {
    engine,
    logger,
    versionClasses,
    isReady: () => catalog.isReady(),
    started: catalog.started,
    catalogStatus: () => catalog.status(),
    reindex: catalog.reindex,
    async close() {
      versionClasses?.close();
      await catalog.close();
      await refreshQueue?.close();
      await engine.close();
    },
  };
}
