import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
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

  constructor(private readonly file: string) {
    if (file !== ":memory:") {
      mkdirSync(dirname(file), { recursive: true });
      claimOwnership(file);
    }
    try {
      this.db = new Database(file);
      this.db.exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 0;");
    } catch (err) {
      if (file !== ":memory:") openHere.delete(file);
      throw err;
    }
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
      if (!this.db.isOpen) return;
      this.db.close();
      if (this.file !== ":memory:") releaseOwnership(this.file);
    });
  }
}

const ownerFile = (file: string) => `${file}.owner`;
/** Files this process has open (an owner file naming this pid may also be a dead container's PID 1). */
const openHere = new Set<string>();

/**
 * The library's VFS locks the file by creating a `<file>.lock` directory, which a process killed
 * with SIGKILL leaves behind: the next start would find the database locked forever. So the
 * owning process is recorded beside it (`<file>.owner`: pid and host). A start that finds an
 * owner still alive on this host refuses, naming it; one whose owner is gone (killed, or another
 * host's container long replaced) removes the stale lock and takes over.
 */
function claimOwnership(file: string): void {
  if (openHere.has(file)) throw new Error(`${file} is in use by this process (it is already open)`);
  let owner: { pid?: unknown; host?: unknown } | null = null;
  try {
    owner = JSON.parse(readFileSync(ownerFile(file), "utf8")) as { pid?: unknown; host?: unknown };
  } catch {
    owner = null; // none, or torn by a crash while being written: nobody to defer to
  }
  if (owner && owner.host === hostname() && typeof owner.pid === "number" && owner.pid !== process.pid && alive(owner.pid)) {
    throw new Error(`${file} is in use by process ${owner.pid}: one process per DATA_DIR`);
  }
  rmSync(`${file}.lock`, { recursive: true, force: true });
  writeFileSync(ownerFile(file), JSON.stringify({ pid: process.pid, host: hostname() }));
  openHere.add(file);
}

function releaseOwnership(file: string): void {
  rmSync(ownerFile(file), { force: true });
  openHere.delete(file);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The embedded ReferenceStore: a SQLite file (`DATA_DIR/assets.sqlite`), or `:memory:` for tests. */
export function createSqliteReferenceStore(file: string): SqlReferenceStore {
  return new SqlReferenceStore(new SqliteDriver(file));
}
