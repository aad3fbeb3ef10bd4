/** What the SQLite worker thread is opened with (its `workerData`). */
export interface SqliteWorkerOptions {
  file: string;
  /** How long a statement waits for another process's lock on the file before failing with SQLITE_BUSY. */
  busyTimeoutMs: number;
  /** SQLite's page cache, in KiB. */
  cacheKiB: number;
}

/** One request to the thread; `id` pairs it with its answer. */
export type SqliteRequest =
  | { id: number; op: "query"; sql: string; params: readonly unknown[] }
  /** A statement without parameters or rows (BEGIN IMMEDIATE, COMMIT). */
  | { id: number; op: "exec"; sql: string }
  /** Roll back the open transaction, if SQLite has not already ended it. */
  | { id: number; op: "rollback" }
  | { id: number; op: "close" };

/** A statement's rows, or for one that returns none the rows it changed. */
export interface SqliteRows {
  rows: Record<string, unknown>[];
  changes?: number;
}

export type SqliteAnswer = { id: number; result: SqliteRows | null } | { id: number; error: { message: string; code?: string } };
