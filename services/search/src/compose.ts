import type { Config, Logger } from "@app/platform";
import { metrics } from "@app/platform";
import type { CatalogReindexResult } from "@app/contracts";
import type { z } from "zod";
import { loadCatalog, type LoadProgress } from "./adapters/catalog-source.ts";
import { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
import type { SearchEngine } from "./adapters/search-engine.ts";
import { CatalogSnapshot } from "./adapters/snapshot.ts";

export type ReindexResult = z.infer<typeof CatalogReindexResult>;
export type ReindexProgressEvent = LoadProgress & { phase: "reading" | "indexing" | "done" };

export interface SearchDeps {
  engine: SearchEngine;
  logger: Logger;
  isReady(): boolean;
  /** Resolves once the start-up load is over (indexed, or failed and logged). */
  started: Promise<void>;
  /** Read a source, swap the new index in (and, embedded, persist it for restarts and other processes). */
  reindex(source: string, onProgress?: (p: ReindexProgressEvent) => void): Promise<ReindexResult>;
  close(): Promise<void>;
}

export interface SearchDepsOptions {
  /**
   * "server" (default): load at start and, embedded, follow the snapshot file. "writer" (the
   * reindex CLI, a worker process): load nothing; a reindex only writes the snapshot (embedded)
   * or swaps the remote index (Meilisearch).
   */
  role?: "server" | "writer";
  engine?: SearchEngine;
}

/** The one place that chooses the engine: Meilisearch when MEILI_URL is set, else the embedded index. */
export async function createSearchEngine(config: Config): Promise<SearchEngine> {
  if (config.MEILI_URL) {
    const { MeiliSearchEngine } = await import("./adapters/meilisearch/meili-engine.ts");
    return new MeiliSearchEngine({ host: config.MEILI_URL, apiKey: config.MEILI_API_KEY, index: config.MEILI_INDEX });
  }
  return new EmbeddedSearchEngine();
}

export async function createSearchDeps(config: Config, logger: Logger, opts: SearchDepsOptions = {}): Promise<SearchDeps> {
  const role = opts.role ?? "server";
  const engine = opts.engine ?? (await createSearchEngine(config));
  const embedded = engine.kind === "embedded";
  const snapshot = embedded ? new CatalogSnapshot(config.DATA_DIR) : undefined;
  let ready = false;
  let closed = false;

  const swapIn = async (records: Parameters<SearchEngine["replaceAll"]>[0]) => {
    await engine.replaceAll(records);
    metrics.indexSize.set(await engine.count());
  };

  const reindex = async (source: string, onProgress?: (p: ReindexProgressEvent) => void): Promise<ReindexResult> => {
    const t0 = performance.now();
    const { records, progress } = await loadCatalog(source, {
      onProgress: (p) => onProgress?.({ ...p, phase: "reading" }),
      onBadRecord: (b) => logger.warn({ source, where: b.where, reason: b.reason }, "catalog record skipped"),
    });
    onProgress?.({ ...progress, phase: "indexing" });
    if (snapshot) await snapshot.write(records);
    if (role === "server" || !embedded) await swapIn(records);
    const result = { ...progress, durationMs: Math.round(performance.now() - t0) };
    onProgress?.({ ...progress, phase: "done" });
    logger.info({ source, ...result }, "catalog reindexed");
    return result;
  };

  let unwatch: (() => void) | undefined;
  let reloading: Promise<unknown> = Promise.resolve();
  const reloadSnapshot = () => {
    if (!snapshot || closed) return;
    reloading = reloading.then(async () => {
      try {
        const { records, progress } = await loadCatalog(snapshot.path);
        await swapIn(records);
        logger.info({ snapshot: snapshot.path, ...progress }, "index rebuilt from a new snapshot");
      } catch (err) {
        logger.error({ err, snapshot: snapshot.path }, "could not load the new snapshot; still serving the previous index");
      }
    });
  };

  const start = async () => {
    if (role !== "server") return;
    try {
      if (config.CATALOG_SOURCE) {
        logger.info({ source: config.CATALOG_SOURCE, engine: engine.kind }, "indexing the catalog");
        await reindex(config.CATALOG_SOURCE);
      } else if (snapshot && (await snapshot.exists())) {
        const { records, progress } = await loadCatalog(snapshot.path);
        await swapIn(records);
        logger.info({ snapshot: snapshot.path, ...progress }, "index restored from the snapshot");
      }
      ready = true;
    } catch (err) {
      logger.error({ err, source: config.CATALOG_SOURCE }, "the catalog could not be indexed; /readyz stays 503");
    }
    if (snapshot && !closed) unwatch = snapshot.watch(reloadSnapshot);
  };
  const started = start();

  return {
    engine,
    logger,
    isReady: () => ready,
    started,
    reindex,
    async close() {
      closed = true;
      unwatch?.();
      await started;
      await reloading;
      await engine.close();
    },
  };
}
