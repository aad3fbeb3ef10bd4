import { mkdirSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { createRequire } from "node:module";
import { KeyedMutex } from "@app/blobs";
import { ReferenceStoreUnavailableError } from "./reference-store.ts";
import { distinct, type SqlDriver, type SqlExecutor } from "./sql-driver.ts";
import { SqlReferenceStore, type SqlStoreOptions } from "./sql-reference-store.ts";

/** The tables' current shape (sql-schema.ts brings an older store's up to it, then makes the indexes). */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS asset_refs (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL DEFAULT '', hash TEXT NOT NULL, name TEXT NOT NULL, name_folded TEXT NOT NULL, size INTEGER NOT NULL,
    mime_type TEXT NOT NULL, tags TEXT NOT NULL, user_metadata TEXT NOT NULL, system_metadata TEXT, preview_id TEXT, origin TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, last_access_time TEXT)`,
  `CREATE TABLE IF NOT EXISTS asset_tags (ref_id TEXT NOT NULL, owner TEXT NOT NULL DEFAULT '', tag TEXT NOT NULL, PRIMARY KEY (ref_id, tag))`,
  `CREATE TABLE IF NOT EXISTS asset_tag_names (owner TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (owner, tag))`,
  `CREATE TABLE IF NOT EXISTS asset_meta (ref_id TEXT NOT NULL, owner TEXT NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (ref_id, entry))`,
];

type SqlValue = string | number | null;

// A CommonJS module whose exports Node cannot name statically: loaded through require.
const { Database } = createRequire(import.meta.url)("node-sqlite3-wasm") as typeof import("node-sqlite3-wasm");

/**
 * SQLite's page cache (its default is 2 MiB). Each page this WebAssembly build reads past the
 * cache is a file read through its VFS (no mmap), and a filtered page over 1,000,000 records
 * reads index ranges of several MiB (bench/asset-list.ts).
 */
const CACHE_KIB = 32 * 1024;

/** How long a statement waits for another process's transaction before the store is unavailable. */
const LOCK_WAIT_MS = 30_000;
/** No transaction here holds the file this long: an older lock was left by a killed process. */
const STALE_LOCK_MS = 15_000;

/**
 * SQLite compiled to WebAssembly (node-sqlite3-wasm), reading and writing its file directly:
 * no native build and no binary to download at install. Several processes may share the file
 * (replicas on one DATA_DIR): the library's VFS locks it by creating `<file>.lock` for the length
 * of each transaction, so the rollback journal is used (WAL needs shared memory this VFS lacks),
 * and a statement that finds the file locked is retried here, without blocking the event loop.
 * A lock older than any transaction was left by a process killed mid-transaction and is removed.
 * Calls are synchronous; within a process every statement and transaction goes through one
 * queue, so a transaction never interleaves with another request's statements.
 */
class SqliteDriver implements SqlDriver {
  readonly kind = "sqlite" as const;
  readonly schema = SCHEMA;
  readonly columnsQuery = "SELECT name FROM pragma_table_info(?)";
  readonly positionFunction = "instr" as const;
  // A record holds a tag or a value once, but may match several of one `tags_any` or one list
  // of values. INTERSECT merges the index ranges through one temporary index (9 ms for 10,000 of
  // 20,000 ids; probing one range's index per id of the other took 25 ms).
  intersection = (sets: string[]) => (sets.length === 1 ? distinct(sets[0]!) : sets.join(" INTERSECT "));
  // SQLite's planner, left alone, reads every match's row to sort them: the index is named.
  walkedInOrder = (index: string) => `asset_refs r INDEXED BY ${index}`;
  // An IN subquery is a probe of a temporary index of the ids, in either case.
  memberRowByRow = (id: string, ids: string) => `${id} IN (${ids})`;
  memberByLookup = (id: string, ids: string) => `${id} IN (${ids})`;
  private readonly db: InstanceType<typeof Database>;
  private readonly queue = new KeyedMutex();
  private readonly hashLocks = new KeyedMutex();

  constructor(private readonly file: string) {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
  }

  private readonly direct: SqlExecutor = {
    all: async (sql, params = []) => this.db.all(sql, params as SqlValue[]) as Record<string, unknown>[],
    run: async (sql, params = []) => this.db.run(sql, params as SqlValue[]).changes,
  };

  private pragmasSet = false;

  /** Runs `fn` in the queue, retrying while another process holds the file. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run("db", async () => {
      const deadline = Date.now() + LOCK_WAIT_MS;
      for (let attempt = 0; ; attempt++) {
        try {
          if (!this.pragmasSet) {
            this.db.exec(`PRAGMA journal_mode = DELETE; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 0; PRAGMA cache_size = -${CACHE_KIB};`);
            this.pragmasSet = true;
          }
          return await fn();
        } catch (err) {
          if (!/database is locked|SQLITE_BUSY/i.test(String((err as Error).message)) || this.file === ":memory:") throw err;
          if (Date.now() > deadline) throw new ReferenceStoreUnavailableError(`${this.file} stayed locked by another process for ${LOCK_WAIT_MS} ms`);
          removeStaleLock(this.file);
          await new Promise((r) => setTimeout(r, Math.min(2 ** attempt, 50)));
        }
      }
    });
  }

  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]> {
    return this.locked(() => this.direct.all(sql, params));
  }

  run(sql: string, params?: unknown[]): Promise<number> {
    return this.locked(() => this.direct.run(sql, params));
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.locked(async () => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const result = await fn(this.direct);
        this.db.exec("COMMIT");
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw err;
      }
    });
  }

  /**
   * In-process: it excludes this process's uploads and deletes of the same bytes. Replicas on
   * one DATA_DIR do not exclude each other's (a delete racing another replica's re-upload of the
   * same bytes can leave that record without its bytes): run several replicas with DATABASE_URL.
   */
  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T> {
    return this.hashLocks.run(hash, fn);
  }

  async close(): Promise<void> {
    await this.queue.run("db", async () => {
      if (this.db.isOpen) this.db.close();
    });
  }
}

function removeStaleLock(file: string): void {
  const lock = `${file}.lock`;
  try {
    if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
  } catch {
    // gone already: the holder finished
  }
}

/** The embedded ReferenceStore: a SQLite file (`DATA_DIR/assets.sqlite`), or `:memory:` for tests. */
export function createSqliteReferenceStore(file: string, options?: SqlStoreOptions): SqlReferenceStore {
  return new SqlReferenceStore(new SqliteDriver(file), options);
}
