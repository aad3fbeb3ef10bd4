import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createRequire } from "node:module";
import { KeyedMutex } from "./blob-store.ts";
import { SHARED_INDEXES, SqlReferenceStore, type SqlDriver, type SqlExecutor } from "./sql-reference-store.ts";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS asset_refs (
    id TEXT PRIMARY KEY, hash TEXT NOT NULL, name TEXT NOT NULL, name_folded TEXT NOT NULL, size INTEGER NOT NULL,
    mime_type TEXT NOT NULL, tags TEXT NOT NULL, user_metadata TEXT NOT NULL, system_metadata TEXT, origin TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS asset_tags (ref_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (ref_id, tag))`,
  ...SHARED_INDEXES,
];

type SqlValue = string | number | null;

// A CommonJS module whose exports Node cannot name statically: loaded through require.
const { Database } = createRequire(import.meta.url)("node-sqlite3-wasm") as typeof import("node-sqlite3-wasm");

/**
 * SQLite compiled to WebAssembly (node-sqlite3-wasm), reading and writing its file directly:
 * no native build and no binary to download at install. The file is opened in WAL mode with an
 * exclusive lock, so a second process on the same DATA_DIR fails at start instead of corrupting
 * anything. Calls are synchronous; every statement and transaction goes through one queue, so
 * a transaction never interleaves with another request's statements.
 */
class SqliteDriver implements SqlDriver {
  readonly kind = "sqlite" as const;
  readonly schema = SCHEMA;
  readonly positionFunction = "instr" as const;
  private readonly db: InstanceType<typeof Database>;
  private readonly queue = new KeyedMutex();
  private readonly hashLocks = new KeyedMutex();

  constructor(file: string) {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 0;");
  }

  private readonly direct: SqlExecutor = {
    all: async (sql, params = []) => this.db.all(sql, params as SqlValue[]) as Record<string, unknown>[],
    run: async (sql, params = []) => this.db.run(sql, params as SqlValue[]).changes,
  };

  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]> {
    return this.queue.run("db", () => this.direct.all(sql, params));
  }

  run(sql: string, params?: unknown[]): Promise<number> {
    return this.queue.run("db", () => this.direct.run(sql, params));
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.queue.run("db", async () => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const result = await fn(this.direct);
        this.db.exec("COMMIT");
        return result;
      } catch (err) {
        this.db.exec("ROLLBACK");
        throw err;
      }
    });
  }

  /** One process owns the file (the exclusive lock), so an in-process lock is every holder. */
  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T> {
    return this.hashLocks.run(hash, fn);
  }

  async close(): Promise<void> {
    await this.queue.run("db", async () => {
      if (this.db.isOpen) this.db.close();
    });
  }
}

/** The embedded ReferenceStore: a SQLite file (`DATA_DIR/assets.sqlite`), or `:memory:` for tests. */
export function createSqliteReferenceStore(file: string): SqlReferenceStore {
  return new SqlReferenceStore(new SqliteDriver(file));
}
