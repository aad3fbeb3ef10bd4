import type { Config, Logger } from "@app/platform";
import type { MirrorOptions } from "./adapters/registry/mirror-options.ts";
import { bundleCatalogPath } from "./adapters/bundle/bundle-import.ts";
import { KeptVersionClasses, versionClassesDir, type VersionClasses } from "./adapters/registry/version-classes.ts";
import { isRegistryUrl } from "./adapters/catalog-source.ts";
import { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
import type { SearchEngine } from "./adapters/search-engine.ts";
import { Catalog } from "./catalog/catalog.ts";
import type { CatalogStatus } from "./catalog/catalog-status.ts";
import type { Reindex } from "./catalog/reindex.ts";
import type { CatalogRole } from "./catalog/role.ts";

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
  const catalog = new Catalog({ config, logger, engine, role: opts.role ?? "server", mirror: opts.mirror });
  const source = config.CATALOG_SOURCE;
  const kept = versionClassesDir(config.DATA_DIR);
  // A bundle's catalog (CATALOG_SOURCE=<bundle.tar>, imported) answers the classes the bundle carried.
  const versionClasses = source && isRegistryUrl(source) ? new KeptVersionClasses(kept, source) : source === bundleCatalogPath(config.DATA_DIR) ? new KeptVersionClasses(kept) : undefined;
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
      await engine.close();
    },
  };
}
