import type { PackListReport } from "./registry/pack-list.ts";
import { parseCatalogRecord, type StoredNode } from "../domain/catalog-record.ts";

export interface LoadProgress {
  read: number;
  indexed: number;
  skipped: number;
}

export interface BadRecord {
  /** 1-based line number (NDJSON), element number (JSON array) or `page P item I` (mirror). */
  where: string;
  reason: string;
}

/** How a registry is mirrored; every field has a default fit for the public registry. */
export interface MirrorOptions {
  /** Nodes asked for per page. */
  pageSize?: number;
  /** Pages in flight at once. */
  concurrency?: number;
  /** Per-pack requests (versions, classes) in flight at once. */
  detailConcurrency?: number;
  /** Further passes over the list when one yields fewer distinct packs than the registry's total. */
  rereads?: number;
  /** While packs' details are read, the catalog so far is served this often. */
  landEveryMs?: number;
  /** Tries per request (a list page, a pack's versions or classes), the first included; 5xx, 429, network errors and timeouts are retried. */
  attempts?: number;
  /** First wait before a page is tried again; doubles with each further try. */
  retryDelayMs?: number;
  /** A page whose answer has not started within this time is abandoned and tried again (covers connecting). */
  headersTimeoutMs?: number;
  /** A page whose body has not fully arrived within this time is abandoned and tried again. */
  bodyTimeoutMs?: number;
}

export interface LoadOptions {
  onBadRecord?: (bad: BadRecord) => void;
  onProgress?: (p: LoadProgress) => void;
  /** Something the operator should know that skipped no record (a registry total that moved mid-mirror). */
  onWarning?: (message: string) => void;
  /** How often (in records read) progress is reported; it is always reported at the end. */
  progressEvery?: number;
  /** fetch for mirror mode (tests may pass their own agent-bound fetch); defaults to global fetch. */
  fetch?: typeof fetch;
  mirror?: MirrorOptions;
  /** What a registry's list read found (its total, the distinct packs, what is missing). */
  onListReport?: (report: PackListReport) => void;
  /** Stops a mirror in flight (shutdown). */
  signal?: AbortSignal;
}

/**
 * Where catalog records come from: an NDJSON file, a JSON array file, or an http(s) URL of a
 * registry-compatible API (mirror mode). Bad records are reported and skipped; a duplicate id
 * keeps its first record. Only an unreadable source (missing file, unreachable server) throws.
 */
export interface CatalogSource {
  readonly description: string;
  readonly kind: "file" | "registry";
  records(opts?: LoadOptions): AsyncGenerator<StoredNode>;
}

export type Raw = { where: string; value: unknown } | { where: string; error: string };

export abstract class BaseSource implements CatalogSource {
  abstract readonly description: string;
  abstract readonly kind: "file" | "registry";
  protected abstract raw(opts: LoadOptions): AsyncGenerator<Raw>;

  async *records(opts: LoadOptions = {}): AsyncGenerator<StoredNode> {
    const p: LoadProgress = { read: 0, indexed: 0, skipped: 0 };
    const every = opts.progressEvery ?? 1000;
    const seen = new Set<string>();
    const bad = (where: string, reason: string) => {
      p.skipped++;
      opts.onBadRecord?.({ where, reason });
    };
    for await (const item of this.raw(opts)) {
      p.read++;
      if ("error" in item) bad(item.where, item.error);
      else {
        const parsed = parseCatalogRecord(item.value);
        if (!parsed.ok) bad(item.where, parsed.reason);
        else if (seen.has(parsed.record.id)) bad(item.where, `duplicate id ${JSON.stringify(parsed.record.id)} (the first record is kept)`);
        else {
          seen.add(parsed.record.id);
          p.indexed++;
          yield parsed.record;
        }
      }
      if (p.read % every === 0) opts.onProgress?.({ ...p });
    }
    opts.onProgress?.({ ...p });
  }
}
