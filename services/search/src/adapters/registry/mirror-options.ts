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
  /**
   * A pass with at least this many packs to read takes their versions from the registry's list
   * of every version (`GET /versions`, 100 a page) instead of one request a pack.
   */
  bulkVersionsFrom?: number;
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
  /** Whole reads of the source per in-process refresh, the first included (`REFRESH_RETRY`). */
  refreshAttempts?: number;
  /** First wait before a refresh's read is tried again; doubles with each further try. */
  refreshBackoffMs?: number;
}

export const MIRROR_DEFAULTS: Required<MirrorOptions> = {
  pageSize: 100,
  concurrency: 4,
  detailConcurrency: 8,
  attempts: 4,
  retryDelayMs: 500,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 60_000,
  rereads: 2,
  bulkVersionsFrom: 50,
  landEveryMs: 60_000,
  refreshAttempts: 6,
  refreshBackoffMs: 5_000,
};
