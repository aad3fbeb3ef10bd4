import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { KeyedMutex } from "@app/blobs";
import { ReferenceStoreUnavailableError } from "./reference-store.ts";
import type { SqlDriver, SqlExecutor } from "./sql-driver.ts";
import { SqlReferenceStore, type SqlStoreOptions } from "./sql-reference-store.ts";
import { SqliteThread } from "./sqlite-thread.ts";

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

/**
 * SQLite's page cache (its default is 2 MiB): a filtered page over 1,000,000 records reads
 * index ranges of several MiB (bench/asset-list.ts).
 */
const CACHE_KIB = 32 * 1024;

/** How long a statement waits for another process's transaction before the store is unavailable. */
const LOCK_WAIT_MS = 30_000;

/**
 * SQLite through better-sqlite3 (native) on a worker thread (sqlite-thread.ts), in WAL mode:
 * readers do not wait for a writer, and a commit syncs the log only at checkpoints. Several
 * processes may share the file (replicas on one DATA_DIR on a local disk: WAL needs shared
 * memory, which network filesystems lack); SQLite's own locks exclude their transactions, and a
 * statement that finds the file locked waits on the thread for up to LOCK_WAIT_MS. Within a
 * process every statement and transaction goes through one queue, so a transaction never
 * interleaves with another request's statements.
 */
class SqliteDriver implements SqlDriver {
  readonly kind = "sqlite" as const;
  readonly schema = SCHEMA;
  readonly columnsQuery = "SELECT name FROM pragma_table_info(?)";
  readonly positionFunction = "instr" as const;
  readonly sharesMatches = false;
  // A record holds a tag or a value once, but may match several of one `tags_any` or one list
  // of values. INTERSECT merges the index ranges through one temporary index (9 ms for 10,000 of
  // 20,000 ids; probing one range's index per id of the other took 25 ms).
  intersection = (sets: string[]) => (sets.length === 1 ? sets[0]! : sets.join(" INTERSECT "));
  // SQLite's planner, left alone, reads every match's row to sort them: the index is named.
  walkedInOrder = (index: string) => `asset_refs r INDEXED BY ${index}`;
  // An IN subquery is a probe of a temporary index of the ids, in either case.
  memberRowByRow = (id: string, ids: string) => `${id} IN (${ids})`;
  memberByLookup = (id: string, ids: string) => `${id} IN (${ids})`;
  private readonly db: SqliteThread;
  private readonly queue = new KeyedMutex();
  private readonly hashLocks = new KeyedMutex();

  constructor(private readonly file: string) {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    this.db = new SqliteThread(file, { busyTimeoutMs: LOCK_WAIT_MS, cacheKiB: CACHE_KIB });
  }

  private readonly direct: SqlExecutor = {
    all: (sql, params = []) => this.guard(() => this.db.all(sql, params)),
    run: (sql, params = []) => this.guard(() => this.db.run(sql, params)),
  };

  /** A lock still held after LOCK_WAIT_MS, or a thread that could not open the file: the store is unavailable. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const { code, message } = err as { code?: string; message?: string };
      if (code === "SQLITE_BUSY" || code === "SQLITE_CANTOPEN" || /SQLite thread exited/.test(String(message))) {
        throw new ReferenceStoreUnavailableError(`${this.file}: ${String(message)}`);
      }
      throw err;
    }
  }

  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]> {
    return this.queue.run("db", () => this.direct.all(sql, params));
  }

  run(sql: string, params?: unknown[]): Promise<number> {
    return this.queue.run("db", () => this.direct.run(sql, params));
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.queue.run("db", async () => {
      await this.guard(() => this.db.exec("BEGIN IMMEDIATE"));
      try {
        const result = await fn(this.direct);
        await this.guard(() => this.db.exec("COMMIT"));
        return result;
      } catch (err) {
        if (await this.db.inTransaction().catch(() => false)) await this.db.exec("ROLLBACK");
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
    await this.queue.run("db", () => this.db.close());
  }
}

/** The embedded ReferenceStore: a SQLite file (`DATA_DIR/assets.sqlite`), or `:memory:` for tests. */
export function createSqliteReferenceStore(file: string, options?: SqlStoreOptions): SqlReferenceStore {
  return new SqlReferenceStore(new SqliteDriver(file), options);
}
