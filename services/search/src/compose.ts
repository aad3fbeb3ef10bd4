import { readFile, stat } from "node:fs/promises";
import { InProcessJobQueue, UnrecoverableJobError } from "@app/jobs";
import type { Config, Logger } from "@app/platform";
import { metrics } from "@app/platform";
import type { CatalogReindexResult } from "@app/contracts";
import type { z } from "zod";
import { isRegistryUrl, loadCatalog, type LoadProgress, type MirrorOptions } from "./adapters/catalog-source.ts";
import { describe } from "./adapters/registry/http.ts";
import { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
import type { SearchEngine } from "./adapters/search-engine.ts";
import { CatalogSnapshot, type SnapshotMeta } from "./adapters/snapshot.ts";
import { registryMirror, type KnownCatalog } from "./registry-mirror.ts";
import type { StoredNode } from "./domain/catalog-record.ts";
import { CatalogRefusedError, CatalogTracker, type CatalogStatus } from "./catalog-status.ts";
import { catalogRefreshMs, CATALOG_REFRESH_SCHEDULE, REFRESH_RETRY } from "./catalog-refresh.ts";
import { createReindexHandler } from "./jobs/reindex-handler.ts";

export type ReindexResult = z.infer<typeof CatalogReindexResult>;
export type ReindexProgressEvent = LoadProgress & { phase: "reading" | "indexing" | "done" };

export interface ReindexOptions {
  /** Swap the new catalog in even when it is empty or less than half the size of the indexed one (a registry: a full pass). */
  force?: boolean;
  /** A registry: a full pass (every pack and its versions) whenever the last one was. */
  full?: boolean;
  onProgress?: (p: ReindexProgressEvent) => void;
}

export { CatalogRefusedError };

export interface SearchDeps {
  engine: SearchEngine;
  logger: Logger;
  /** True once the local part of start-up is over (snapshot restored, a file source indexed); never waits on the network. */
  isReady(): boolean;
  /** Resolves once that local part is over (indexed, or failed and logged). */
  started: Promise<void>;
  /** What /readyz reports about the catalog. */
  catalogStatus(): CatalogStatus;
  /** Read a source, swap the new index in (and, embedded, persist it for restarts and other processes). */
  reindex(source: string, opts?: ReindexOptions): Promise<ReindexResult>;
  close(): Promise<void>;
}

export interface SearchDepsOptions {
  /**
   * "server" (default): load at start, keep a URL source mirrored and, embedded, follow the
   * snapshot file. "writer" (the reindex CLI, a worker process): load nothing; a reindex only
   * writes the snapshot (embedded) or swaps the remote index (Meilisearch).
   */
  role?: "server" | "writer";
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

export async function createSearchDeps(config: Config, logger: Logger, opts: SearchDepsOptions = {}): Promise<SearchDeps> {
  const role = opts.role ?? "server";
  const engine = opts.engine ?? (await createSearchEngine(config));
  const embedded = engine.kind === "embedded";
  const snapshot = embedded ? new CatalogSnapshot(config.DATA_DIR) : undefined;
  const source = config.CATALOG_SOURCE;
  const tracker = new CatalogTracker(source ?? null, !!source && isRegistryUrl(source));
  // A registry mirror's memory (the last catalog and when it was read), whatever the engine.
  const store = snapshot ?? new CatalogSnapshot(config.DATA_DIR);
  let known: KnownCatalog | undefined;
  const closing = new AbortController();
  let ready = false;

  const swapIn = async (records: Parameters<SearchEngine["replaceAll"]>[0]) => {
    await engine.replaceAll(records);
    metrics.indexSize.set(await engine.count());
  };

  /** The size a new catalog is compared with: the index served, or (a writer) the last snapshot written. */
  const indexedCount = async (): Promise<number> => {
    if (role === "server") return tracker.status().nodes;
    if (!snapshot) return engine.count();
    const meta = await snapshot.readMeta();
    if (meta) return meta.nodes;
    const text = await readFile(snapshot.path, "utf8").catch(() => "");
    return text.split("\n").filter((l) => l.trim() !== "").length;
  };

  const refuseShrink = async (from: string, nodes: number, ro: ReindexOptions) => {
    const previous = await indexedCount();
    if (!ro.force && previous > 0 && nodes < previous / 2) {
      throw new CatalogRefusedError(
        `refused the catalog read from ${from}: ${nodes} nodes, less than half of the ${previous} indexed; ` +
          "the old index keeps serving (`pnpm reindex --force` swaps it in anyway)",
      );
    }
  };

  /** A new catalog is served: persisted (the snapshot, or a mirror's memory), swapped in, reported. */
  const land = async (records: StoredNode[], meta: Omit<SnapshotMeta, "nodes" | "indexedAt">) => {
    const indexedAt = new Date().toISOString();
    if (snapshot || isRegistryUrl(meta.source)) await store.write(records, { ...meta, indexedAt });
    known = { records, indexedAt };
    if (role === "server" || !embedded) await swapIn(records);
    if (role === "server") tracker.indexed(records.length, { indexedAt, source: meta.source }, true);
  };

  const readFileSource = async (from: string, ro: ReindexOptions): Promise<LoadProgress> => {
    const { records, progress } = await loadCatalog(from, {
      onProgress: (p) => ro.onProgress?.({ ...p, phase: "reading" }),
      onBadRecord: (b) => logger.warn({ source: from, where: b.where, reason: b.reason }, "catalog record skipped"),
      onWarning: (message) => logger.warn({ source: from }, message),
      signal: closing.signal,
    });
    await refuseShrink(from, records.length, ro);
    ro.onProgress?.({ ...progress, phase: "indexing" });
    await land(records, { source: from });
    return progress;
  };

  const mirror = registryMirror({ config, logger, role, store, tracker, land, refuseShrink, signal: closing.signal, options: opts.mirror, memory: () => known, remember: (k) => (known = k), shared: embedded ? undefined : () => engine.all() });

  const reindex = async (from: string, ro: ReindexOptions = {}): Promise<ReindexResult> => {
    const t0 = performance.now();
    // Shutting down: no read starts, and a retry of one cut short is not worth its tries.
    if (closing.signal.aborted) throw new UnrecoverableJobError("the search service is closing");
    try {
      const progress = isRegistryUrl(from) ? await mirror(from, ro) : await readFileSource(from, ro);
      const result = { ...progress, durationMs: Math.round(performance.now() - t0) };
      ro.onProgress?.({ ...progress, phase: "done" });
      logger.info({ source: from, ...result }, "catalog reindexed");
      return result;
    } catch (err) {
      const reason = describe(err);
      if (role === "server") tracker.failed(reason);
      if (!closing.signal.aborted) logger.warn({ source: from, reason }, err instanceof CatalogRefusedError ? "catalog refused" : "catalog could not be read; the index keeps serving what it had");
      throw err;
    }
  };

  let unwatch: (() => void) | undefined;
  let reloading: Promise<unknown> = Promise.resolve();
  const restoreSnapshot = async (fresh: boolean) => {
    const { records, progress } = await loadCatalog(snapshot!.path);
    await swapIn(records);
    const meta = await snapshot!.readMeta();
    if (meta) known = { records, indexedAt: meta.indexedAt };
    const indexedAt = meta?.indexedAt ?? (await stat(snapshot!.path)).mtime.toISOString();
    tracker.indexed(records.length, { indexedAt, source: meta?.source }, fresh);
    return progress;
  };
  const reloadSnapshot = () => {
    if (!snapshot || closing.signal.aborted) return;
    reloading = reloading.then(async () => {
      try {
        // Another process (the CLI, a worker) has just read the source: this index is fresh.
        const progress = await restoreSnapshot(true);
        logger.info({ snapshot: snapshot.path, ...progress }, "index rebuilt from a new snapshot");
      } catch (err) {
        logger.error({ err, snapshot: snapshot.path }, "could not load the new snapshot; still serving the previous index");
      }
    });
  };

  let refreshQueue: InProcessJobQueue | undefined;
  const startRefresh = async (everyMs: number) => {
    if (!source || config.REDIS_URL) return; // at scale the worker runs the one scheduler (see worker compose)
    refreshQueue = new InProcessJobQueue({ concurrency: 1, ...REFRESH_RETRY });
    await refreshQueue.work({ "catalog.reindex": createReindexHandler({ reindex }) });
    if (everyMs > 0) await refreshQueue.schedule(CATALOG_REFRESH_SCHEDULE, "catalog.reindex", { source }, { everyMs });
    else await refreshQueue.enqueue("catalog.reindex", { source }, { jobId: "catalog-first-read" }); // refresh off: one read now
  };

  const start = async () => {
    if (role !== "server") return;
    try {
      if (source && !isRegistryUrl(source)) {
        // A local file is read before the service says it is ready, as it always was.
        logger.info({ source, engine: engine.kind }, "indexing the catalog");
        await reindex(source);
      } else if (snapshot && (await snapshot.exists())) {
        const progress = await restoreSnapshot(false);
        logger.info({ snapshot: snapshot.path, ...progress }, "index restored from the snapshot");
      } else if (!snapshot) {
        // Meilisearch keeps its own index: what it holds now is what is served.
        tracker.indexed(await engine.count().catch(() => 0), { indexedAt: null }, false);
      }
      ready = true;
    } catch (err) {
      logger.error({ err, source }, "the catalog could not be indexed; /readyz stays 503");
    }
    if (snapshot && !closing.signal.aborted) unwatch = snapshot.watch(reloadSnapshot);
    if (ready) {
      const refreshMs = catalogRefreshMs(config);
      const s = tracker.status();
      if (s.state !== "fresh") {
        const serving = s.state === "empty" ? "an empty index (searches answer empty pages)" : `${s.nodes} nodes from the snapshot of ${s.indexedAt}`;
        const next = !source ? "CATALOG_SOURCE=none: nothing is read" : config.REDIS_URL ? `the worker mirrors ${source} in the background` : `the first read of ${source} runs in the background`;
        logger.warn({ catalog: s }, `catalog ${s.state}: serving ${serving}; ${next}; /readyz reports the catalog's state`);
      }
      if (source && (isRegistryUrl(source) || refreshMs > 0)) await startRefresh(refreshMs);
    }
  };
  const started = start();

  return {
    engine,
    logger,
    isReady: () => ready,
    started,
    catalogStatus: () => tracker.status(),
    reindex,
    async close() {
      closing.abort(new Error("the search service is closing"));
      unwatch?.();
      await started;
      await refreshQueue?.close();
      await reloading;
      await engine.close();
    },
  };
}
