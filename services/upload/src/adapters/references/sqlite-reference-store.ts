import { KeyedMutex } from "@app/blobs";
import { openDatabase } from "@app/sql";
import type { AssetTables } from "./asset-tables.ts";
import { SQLITE_LIST } from "./sql-dialect.ts";
import { SqlReferenceStore, type SqlStoreOptions } from "./sql-reference-store.ts";

/**
 * SQLite's page cache (its default is 2 MiB): a filtered page over 1,000,000 records reads
 * index ranges of several MiB (bench/asset-list.ts).
 */
const CACHE_KIB = 32 * 1024;

/** How long a statement waits for another process's transaction before the store is unavailable. */
const LOCK_WAIT_MS = 30_000;

/**
 * The embedded ReferenceStore: a SQLite file (`DATA_DIR/assets.sqlite`), or `:memory:` for
 * tests, through better-sqlite3 on a worker thread in WAL mode (@app/sql). Several processes may
 * share the file (replicas on one DATA_DIR on a local disk: WAL needs shared memory, which
 * network filesystems lack); SQLite's own locks exclude their transactions. Within a process
 * every statement and transaction takes the one connection in turn.
 *
 * The hash lock is in-process: it excludes this process's uploads and deletes of the same
 * bytes. Replicas on one DATA_DIR do not exclude each other's (a delete racing another replica's
 * re-upload of the same bytes can leave that record without its bytes): run several replicas
 * with DATABASE_URL.
 */
export function createSqliteReferenceStore(file: string, options?: SqlStoreOptions): SqlReferenceStore {
  const database = openDatabase<AssetTables>({ kind: "sqlite", file, busyTimeoutMs: LOCK_WAIT_MS, cacheKiB: CACHE_KIB });
  const locks = new KeyedMutex();
  const hashLock = {
    init: async () => undefined,
    run: <T>(hash: string, fn: () => Promise<T>) => locks.run(hash, fn),
    close: async () => undefined,
  };
  return new SqlReferenceStore(database, SQLITE_LIST, hashLock, options);
}
