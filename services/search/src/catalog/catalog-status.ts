import type { MirrorProgress } from "../adapters/registry/mirror-pass.ts";

/** Packs a registry counts that the last full list read did not return, after its re-reads. */
export interface MissingPacks {
  /** How many: the registry's total less the distinct packs read. */
  count: number;
  /** Packs served from the previous catalog because the list did not return them (at most 50 named). */
  kept: string[];
  at: string;
}

/**
 * What /readyz says about the catalog. `fresh`: the index came from its source at the last read
 * this process knows of. `stale`: it is serving an older index (restored from the snapshot at
 * start, or the last read failed or was refused). `empty`: there is nothing to serve yet.
 */
/** After a failed read of the source: when it is read again. */
export interface CatalogNextTry {
  /** When the next try starts; null: none until a restart (no refresh is scheduled). */
  at: string | null;
  /** True while this refresh has tries left; false once they are used up and the next try is the next scheduled refresh. */
  retrying: boolean;
  /** Failed tries of this refresh so far. */
  failedTries: number;
}

export interface CatalogStatus {
  state: "fresh" | "stale" | "empty";
  /** Where the catalog served came from (the snapshot's source after a restart), else the configured source. */
  source: string | null;
  /** The configured source, when it is not where the catalog served came from (it is read next). */
  readingFrom?: string;
  indexedAt: string | null;
  nodes: number;
  lastError: string | null;
  /** A registry source: the current (or last) mirror pass, its progress and errors. */
  mirror?: MirrorProgress | null;
  /** A registry source: what the last full list read could not find (null: nothing). */
  missing?: MissingPacks | null;
  /** After a failed read, when the source is read again; null while a read runs or after one succeeded. */
  nextTry?: CatalogNextTry | null;
}

export class StatusTracker {
  private fresh = false;
  private nodes = 0;
  private indexedAt: string | null = null;
  private indexedFrom: string | null = null;
  private lastError: string | null = null;
  private mirror: MirrorProgress | null = null;
  private missing: MissingPacks | null = null;
  private nextTry: CatalogNextTry | null = null;

  constructor(
    private readonly source: string | null,
    private readonly mirrors = false,
  ) {}

  /** A mirror pass moved on. */
  progress(p: MirrorProgress): void {
    this.mirror = p;
    this.nextTry = null;
  }

  /** A full list read ended: with packs missing, or (null) complete. */
  listed(missing: MissingPacks | null): void {
    this.missing = missing;
  }

  /** A new index is being served: read just now from its source (fresh) or restored from disk (not). */
  indexed(nodes: number, at: { indexedAt: string | null; source?: string | null }, fresh: boolean): void {
    this.nodes = nodes;
    this.indexedAt = at.indexedAt;
    this.indexedFrom = at.source ?? this.indexedFrom;
    this.fresh = fresh;
    if (fresh) {
      this.lastError = null;
      this.nextTry = null;
    }
  }

  /** A read of the source failed or was refused: the index served is unchanged, and now stale. */
  failed(reason: string): void {
    this.fresh = false;
    this.lastError = reason;
    // The pass is over: it must not read as still listing until the next one starts.
    if (this.mirror && this.mirror.phase !== "done") this.mirror = { ...this.mirror, phase: "failed" };
  }

  /** The failed read is tried again at `next.at` (by its refresh's retries, or the next refresh). */
  willRetry(next: CatalogNextTry): void {
    this.nextTry = next;
  }

  status(): CatalogStatus {
    const source = this.indexedFrom ?? this.source;
    return {
      state: this.nodes === 0 ? "empty" : this.fresh ? "fresh" : "stale",
      source,
      ...(this.source && this.source !== source && { readingFrom: this.source }),
      indexedAt: this.indexedAt,
      nodes: this.nodes,
      lastError: this.lastError,
      ...(this.mirrors && { mirror: this.mirror, missing: this.missing }),
      ...(this.source && { nextTry: this.nextTry }),
    };
  }
}

/** A new catalog that would shrink the index by more than half: refused, the old index keeps serving. */
export class CatalogRefusedError extends Error {
  override name = "CatalogRefusedError";
}
