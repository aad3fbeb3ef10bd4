import { stat } from "node:fs/promises";
import { UnrecoverableJobError, type JobQueue } from "@app/jobs";
import { catalogSourceName, type CatalogSourceConfig, type Config, type Logger } from "@app/platform";
import { metrics } from "@app/platform";
import { isRegistryUrl, loadCatalog, type LoadProgress } from "../adapters/catalog-source.ts";
import { describe } from "../adapters/registry/http.ts";
import type { MirrorOptions } from "../adapters/registry/mirror-options.ts";
import type { SearchEngine } from "../ports/search-engine.ts";
import { CatalogSnapshot, type SnapshotMeta } from "../adapters/snapshot.ts";
import type { StoredNode } from "../domain/catalog-record.ts";
import { LastWrittenCatalog } from "./last-written.ts";
import { catalogRefreshMs, CATALOG_REFRESH_SCHEDULE, refreshRetry } from "./catalog-refresh.ts";
import { CatalogRefusedError, StatusTracker, type CatalogStatus } from "./catalog-status.ts";
import type { ReindexOptions, ReindexResult } from "./reindex.ts";
import { createMirrorReindex } from "./mirror-reindex.ts";
import { roleRules, type CatalogRole, type RoleRules } from "./role.ts";

export interface CatalogOptions {
  config: Config;
  logger: Logger;
  engine: SearchEngine;
  role: CatalogRole;
  /** What the catalog is read from (a bundle's, once imported, is the catalog file it was imported to). */
  source: CatalogSourceConfig;
  /** How registries are mirrored (tests shorten the timeouts). */
  mirror?: MirrorOptions;
  /**
   * Where a server schedules its refresh: a queue whose `catalog.reindex` jobs run this catalog's
   * reindex. None: this process refreshes nothing (a writer, or a server whose worker does at scale).
   */
  refreshQueue?: JobQueue;
}

/**
 * The catalog's whole lifecycle over one engine: reading a source (a file, or a registry
 * mirrored pass by pass), the shrink guard, landing a new catalog (persisted, swapped in,
 * reported), and for a server the start (a file read, or the snapshot restored), following
 * the snapshot other processes write, the in-process refresh schedule and readiness.
 */
export class Catalog {
  /** Resolves once the local part of start-up is over (indexed, or failed and logged); never waits on the network. */
  readonly started: Promise<void>;
  private readonly config: Config;
  private readonly logger: Logger;
  private readonly engine: SearchEngine;
  private readonly rules: RoleRules;
  private readonly sourceConfig: CatalogSourceConfig;
  /** The source's URL or path; none: nothing is read. */
  private readonly source: string | undefined;
  /** Embedded: the index's persistence, which a server restores at start and follows. */
  private readonly snapshot: CatalogSnapshot | undefined;
  private readonly lastWritten: LastWrittenCatalog;
  private readonly tracker: StatusTracker;
  private readonly mirror: (from: string, ro: ReindexOptions) => Promise<LoadProgress>;
  private readonly closing = new AbortController();
  private ready = false;
  private unwatch: (() => void) | undefined;
  private reloading: Promise<unknown> = Promise.resolve();
  private readonly refreshQueue: JobQueue | undefined;
  /** Tries per in-process refresh and the first wait between them (the refresh queue's). */
  private readonly refreshRetry: { attempts: number; backoffMs: number };
  /** When the refresh schedule began: it ticks every refresh interval from then. */
  private scheduledAt = 0;
  private refreshEveryMs = 0;

  constructor(o: CatalogOptions) {
    this.config = o.config;
    this.logger = o.logger;
    this.engine = o.engine;
    this.rules = roleRules(o.role, o.engine.kind);
    this.sourceConfig = o.source;
    this.source = catalogSourceName(o.source) ?? undefined;
    this.refreshQueue = o.refreshQueue;
    this.refreshRetry = refreshRetry(o.mirror);
    const embedded = o.engine.kind === "embedded";
    this.snapshot = embedded ? new CatalogSnapshot(o.config.DATA_DIR) : undefined;
    this.lastWritten = new LastWrittenCatalog(
      this.snapshot ?? new CatalogSnapshot(o.config.DATA_DIR),
      embedded,
      embedded ? undefined : () => o.engine.all(),
    );
    this.tracker = new StatusTracker(this.source ?? null, o.source.kind === "registry");
    this.mirror = createMirrorReindex({
      logger: o.logger,
      fullRefreshMs: o.config.CATALOG_FULL_REFRESH,
      options: o.mirror,
      signal: this.closing.signal,
      lastWritten: this.lastWritten,
      tracker: this.tracker,
      land: (records, meta) => this.land(records, meta),
      refuseShrink: (from, nodes, ro) => this.refuseShrink(from, nodes, ro),
    });
    this.started = this.rules.serves ? this.start() : Promise.resolve();
  }

  /** True once the local part of start-up is over (snapshot restored, a file source indexed). */
  isReady(): boolean {
    return this.ready;
  }

  /** What /readyz reports about the catalog. */
  status(): CatalogStatus {
    return this.tracker.status();
  }

  /** Read a source, swap the new index in (and, embedded, persist it for restarts and other processes). */
  readonly reindex = async (from: string, ro: ReindexOptions = {}): Promise<ReindexResult> => {
    const t0 = performance.now();
    // Shutting down: no read starts, and a retry of one cut short is not worth its tries.
    if (this.closing.signal.aborted) throw new UnrecoverableJobError("the search service is closing");
    try {
      const progress = isRegistryUrl(from) ? await this.mirror(from, ro) : await this.readFileSource(from, ro);
      const result = { ...progress, durationMs: Math.round(performance.now() - t0) };
      ro.onProgress?.({ ...progress, phase: "done" });
      this.logger.info({ source: from, ...result }, "catalog reindexed");
      return result;
    } catch (err) {
      const reason = describe(err);
      this.tracker.failed(reason);
      if (!this.closing.signal.aborted && ro.logFailure !== false)
        this.logger.warn(
          { source: from, reason },
          err instanceof CatalogRefusedError ? "catalog refused" : "catalog could not be read; the index keeps serving what it had",
        );
      throw err;
    }
  };

  /** Stops reads and the snapshot watch; the engine and the refresh queue are their owner's to close. */
  async close(): Promise<void> {
    this.closing.abort(new Error("the search service is closing"));
    this.unwatch?.();
    await this.started;
    await this.reloading;
  }

  private async swapIn(records: StoredNode[]): Promise<void> {
    await this.engine.replaceAll(records);
    metrics.indexSize.set(await this.engine.count());
  }

  /** The size a new catalog is compared with: the index served, or (a writer) the last catalog written. */
  private async indexedCount(): Promise<number> {
    if (this.rules.serves) return this.tracker.status().nodes;
    return (await this.lastWritten.writtenCount()) ?? this.engine.count();
  }

  /** The shrink guard: a catalog less than half the size of the indexed one is refused unless forced. */
  private async refuseShrink(from: string, nodes: number, ro: ReindexOptions): Promise<void> {
    const previous = await this.indexedCount();
    if (!ro.force && previous > 0 && nodes < previous / 2) {
      throw new CatalogRefusedError(
        `refused the catalog read from ${from}: ${nodes} nodes, less than half of the ${previous} indexed; ` +
          "the old index keeps serving (`pnpm reindex --force` swaps it in anyway)",
      );
    }
  }

  /** A new catalog is served: persisted (the snapshot, or a mirror's memory), swapped in, reported. */
  private async land(records: StoredNode[], meta: Omit<SnapshotMeta, "nodes" | "indexedAt">): Promise<void> {
    const indexedAt = new Date().toISOString();
    await this.lastWritten.write(records, { ...meta, indexedAt });
    if (this.rules.swapsIn) await this.swapIn(records);
    this.tracker.indexed(records.length, { indexedAt, source: meta.source }, true);
  }

  private async readFileSource(from: string, ro: ReindexOptions): Promise<LoadProgress> {
    const { records, progress } = await loadCatalog(from, {
      onProgress: (p) => ro.onProgress?.({ ...p, phase: "reading" }),
      onBadRecord: (b) => this.logger.warn({ source: from, where: b.where, reason: b.reason }, "catalog record skipped"),
      onWarning: (message) => this.logger.warn({ source: from }, message),
      signal: this.closing.signal,
    });
    await this.refuseShrink(from, records.length, ro);
    ro.onProgress?.({ ...progress, phase: "indexing" });
    await this.land(records, { source: from });
    return progress;
  }

  private async restoreSnapshot(snapshot: CatalogSnapshot, fresh: boolean): Promise<LoadProgress> {
    const { records, progress } = await loadCatalog(snapshot.path);
    await this.swapIn(records);
    const meta = await snapshot.readMeta();
    this.lastWritten.restored(records, meta);
    const indexedAt = meta?.indexedAt ?? (await stat(snapshot.path)).mtime.toISOString();
    this.tracker.indexed(records.length, { indexedAt, source: meta?.source }, fresh);
    return progress;
  }

  /** Another process (the CLI, a worker) has just written the snapshot: this index is fresh. */
  private reloadSnapshot(snapshot: CatalogSnapshot): void {
    if (this.closing.signal.aborted) return;
    this.reloading = this.reloading.then(async () => {
      try {
        const progress = await this.restoreSnapshot(snapshot, true);
        this.logger.info({ snapshot: snapshot.path, ...progress }, "index rebuilt from a new snapshot");
      } catch (err) {
        this.logger.error({ err, snapshot: snapshot.path }, "could not load the new snapshot; still serving the previous index");
      }
    });
  }

  /** A server's start: the local part (a file read, or the snapshot restored), then the watch and the refresh. */
  private async start(): Promise<void> {
    const { source, sourceConfig, snapshot, logger, config } = this;
    try {
      if (source && sourceConfig.kind !== "registry") {
        // A local file is read before the service says it is ready, as it always was.
        logger.info({ source, engine: this.engine.kind }, "indexing the catalog");
        await this.reindex(source);
      } else if (snapshot && (await snapshot.exists())) {
        const progress = await this.restoreSnapshot(snapshot, false);
        logger.info({ snapshot: snapshot.path, ...progress }, "index restored from the snapshot");
      } else if (!snapshot) {
        // Meilisearch keeps its own index: what it holds now is what is served.
        this.tracker.indexed(await this.engine.count().catch(() => 0), { indexedAt: null }, false);
      }
      this.ready = true;
    } catch (err) {
      logger.error({ err, source }, "the catalog could not be indexed; /readyz stays 503");
    }
    if (snapshot && !this.closing.signal.aborted) this.unwatch = snapshot.watch(() => this.reloadSnapshot(snapshot));
    if (this.ready) {
      const refreshMs = catalogRefreshMs(sourceConfig, config.CATALOG_REFRESH);
      const s = this.tracker.status();
      if (s.state !== "fresh") {
        const serving =
          s.state === "empty" ? "an empty index (searches answer empty pages)" : `${s.nodes} nodes from the snapshot of ${s.indexedAt}`;
        const next = !source
          ? "CATALOG_SOURCE=none: nothing is read"
          : config.REDIS_URL
            ? `the worker mirrors ${source} in the background`
            : `the first read of ${source} runs in the background`;
        logger.warn({ catalog: s }, `catalog ${s.state}: serving ${serving}; ${next}; /readyz reports the catalog's state`);
      }
      if (source && (sourceConfig.kind === "registry" || refreshMs > 0)) await this.startRefresh(source, refreshMs);
    }
  }

  /**
   * A try of the in-process refresh failed (`refreshJobs` counts them): /readyz's `nextTry` says
   * when the next one is. A failed try with tries left is logged at info; the last one of a
   * refresh at warn, once, with the time of the next refresh and how to serve a catalog without
   * a network. Returns whether the refresh tries again.
   */
  readonly refreshFailed = (err: unknown, failedTries: number, source: string): boolean => {
    if (this.closing.signal.aborted) return false;
    const now = Date.now();
    const { attempts, backoffMs } = this.refreshRetry;
    const everyMs = this.refreshEveryMs;
    const retrying = !(err instanceof UnrecoverableJobError) && failedTries < attempts;
    // The schedule ticks every `everyMs` from `scheduledAt`; with no schedule nothing reads again.
    const nextMs = retrying
      ? now + backoffMs * 2 ** (failedTries - 1)
      : everyMs > 0
        ? this.scheduledAt + Math.ceil((now - this.scheduledAt + 1) / everyMs) * everyMs
        : null;
    const at = nextMs === null ? null : new Date(nextMs).toISOString();
    this.tracker.willRetry({ at, retrying, failedTries });
    const reason = describe(err);
    if (retrying) {
      this.logger.info({ source, reason, try: failedTries, of: attempts, nextTryAt: at }, "catalog read failed; trying again");
      return true;
    }
    const s = this.tracker.status();
    const serving = s.nodes === 0 ? "an empty index" : `${s.nodes} nodes from ${s.source}`;
    this.logger.warn(
      { source, reason, tries: failedTries, nextTryAt: at },
      `catalog could not be read (${failedTries} ${failedTries === 1 ? "try" : "tries"}); serving ${serving}; ${at ? `next try at ${at}` : "no further try until a restart"}. Without a network, serve a file or a bundle: CATALOG_SOURCE=<file.ndjson|bundle.tar> or CATALOG_SOURCE=demo`,
    );
    return false;
  };

  private async startRefresh(source: string, everyMs: number): Promise<void> {
    const queue = this.refreshQueue;
    if (!queue) return;
    this.scheduledAt = Date.now();
    this.refreshEveryMs = everyMs;
    if (everyMs > 0) await queue.schedule(CATALOG_REFRESH_SCHEDULE, "catalog.reindex", { source }, { everyMs });
    else await queue.enqueue("catalog.reindex", { source }, { jobId: "catalog-first-read" }); // refresh off: one read now
  }
}
