import type { Logger } from "@app/platform";
import type { LoadProgress } from "../adapters/catalog-source.ts";
import { PermanentHttpError } from "../adapters/registry/http.ts";
import { readMirrorPass } from "../adapters/registry/mirror-pass.ts";
import type { MirrorOptions } from "../adapters/registry/mirror-options.ts";
import type { SnapshotMeta } from "../adapters/snapshot.ts";
import type { StoredNode } from "../domain/catalog-record.ts";
import type { LastWrittenCatalog } from "./last-written.ts";
import type { StatusTracker } from "./catalog-status.ts";
import type { ReindexOptions } from "./reindex.ts";

/** `timestamp=` is the last pass's start less this much: the registry's clock and ours may differ. */
const SINCE_MARGIN_MS = 5 * 60_000;

/** What a mirror needs of the catalog it keeps. */
export interface MirrorReindexDeps {
  logger: Logger;
  /** CATALOG_FULL_REFRESH: a pass is full when the last full one is older. */
  fullRefreshMs: number;
  options?: MirrorOptions;
  signal: AbortSignal;
  /** The catalog the next pass goes on from. */
  lastWritten: LastWrittenCatalog;
  tracker: StatusTracker;
  /** Persist, swap in and report a new catalog. */
  land(records: StoredNode[], meta: Omit<SnapshotMeta, "nodes" | "indexedAt">): Promise<void>;
  /** Throws when a full list would shrink the index by more than half (unless forced). */
  refuseShrink(from: string, nodes: number, ro: ReindexOptions): Promise<void>;
}

/**
 * A registry read as the catalog: a full pass (the whole list, so deletions show, and every
 * pack's versions) when asked or when the last one is older than CATALOG_FULL_REFRESH;
 * otherwise only the packs updated since the last pass. A full pass serves its pack list as soon
 * as it is read, then again with the versions and classes.
 */
export function createMirrorReindex(d: MirrorReindexDeps): (from: string, ro: ReindexOptions) => Promise<LoadProgress> {
  const { logger, tracker } = d;

  /** Registries that answered `timestamp=` with a 400 (another instance of this service does): full passes only. */
  const noTimestamp = new Set<string>();

  const pass = async (from: string, ro: ReindexOptions): Promise<LoadProgress> => {
    const prev = await d.lastWritten.previous(from);
    const startedAt = new Date();
    const listedAt = startedAt.toISOString();
    const lastFull = prev?.meta.fullAt ? Date.parse(prev.meta.fullAt) : NaN;
    const full =
      !!(ro.full || ro.force) || noTimestamp.has(from) || !prev?.meta.listedAt || !(startedAt.getTime() - lastFull < d.fullRefreshMs);
    const since = prev?.meta.listedAt ? new Date(Date.parse(prev.meta.listedAt) - SINCE_MARGIN_MS).toISOString() : undefined;
    let fullAt = prev?.meta.fullAt;
    const outcome = await readMirrorPass(from, prev?.records, {
      full,
      since,
      mirror: d.options,
      signal: d.signal,
      onBadRecord: (b) => logger.warn({ source: from, where: b.where, reason: b.reason }, "catalog record skipped"),
      onWarning: (message) => logger.warn({ source: from }, message),
      onProgress: (p) => {
        tracker.progress(p);
        ro.onProgress?.({ read: p.packs.read, indexed: p.versions.done, skipped: p.errors, phase: "reading" });
      },
      onPartial: async (records) => {
        try {
          await d.land(records, { source: from, listedAt, fullAt });
        } catch (err) {
          logger.warn({ source: from, err }, "could not serve the classes and versions read so far; the pass goes on");
        }
      },
      onListed: async (records, { report, kept }) => {
        await d.refuseShrink(from, records.length, ro);
        // Even when the list came back short: a registry whose count stays off must not make every refresh a full pass.
        fullAt = listedAt;
        const missing = report.missing === 0 ? null : { count: report.missing, kept: kept.slice(0, 50), at: listedAt };
        tracker.listed(missing);
        if (missing) {
          logger.warn(
            {
              source: from,
              missing: report.missing,
              total: report.total,
              distinct: report.distinct,
              passes: report.passes,
              kept: missing.kept,
            },
            `catalog: ${report.missing} of the registry's ${report.total} packs were not returned by ${report.passes} reads of its list; ` +
              `${kept.length} of them are served from the previous catalog (/readyz: catalog.missing)`,
          );
        }
        ro.onProgress?.({ read: records.length, indexed: records.length, skipped: 0, phase: "indexing" });
        await d.land(records, { source: from, listedAt, fullAt });
      },
    });
    if (outcome.changed) {
      ro.onProgress?.({ ...outcome.load, phase: "indexing" });
      await d.land(outcome.records, { source: from, listedAt, fullAt });
    } else {
      // Nothing new: nothing is rebuilt, and the next pass asks from this one on.
      await d.lastWritten.writeMeta({ ...prev!.meta, listedAt });
      tracker.indexed(outcome.records.length, { indexedAt: listedAt, source: from }, true);
    }
    const p = outcome.progress;
    tracker.progress(p);
    const summary = {
      source: from,
      pass: p.pass,
      packs: outcome.records.length,
      listed: p.packs.read,
      versionsRead: p.versions.done,
      requests: p.requests,
      errors: p.errors,
    };
    if (outcome.errors.length > 0) {
      logger.warn(
        { ...summary, reasons: outcome.errors.slice(0, 10) },
        `catalog: ${outcome.errors.length} packs' versions or classes could not be read; they keep what was known`,
      );
    }
    logger.info(summary, "catalog mirror pass done");
    return outcome.load;
  };

  return async (from, ro) => {
    try {
      return await pass(from, ro);
    } catch (err) {
      const refused = err instanceof PermanentHttpError && err.status === 400 && /[?&]timestamp=/.test(err.message);
      if (!refused || ro.full) throw err;
      noTimestamp.add(from);
      logger.warn({ source: from, reason: err.message }, "the registry refused timestamp=: every refresh of it is a full pass");
      return pass(from, { ...ro, full: true });
    }
  };
}
