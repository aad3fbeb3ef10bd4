import pg from "pg";
import { openDatabase } from "@app/sql";
import type { AssetTables } from "./asset-tables.ts";
import { ReferenceStoreUnavailableError } from "./reference-store.ts";
import { POSTGRES_LIST } from "./sql-dialect.ts";
import { SqlReferenceStore, type HashLock, type SqlStoreOptions } from "./sql-reference-store.ts";

/**
 * The hash lock: a session advisory lock held on a connection of a pool of its own. A holder
 * runs queries on the store's pool while it holds the lock, so lock holders can never take
 * every query connection and wait on each other.
 */
function advisoryHashLock(connectionString: string): HashLock {
  const pool = new pg.Pool({ connectionString, max: 10 });
  // An idle client that loses its server emits here; without a listener the process would exit.
  pool.on("error", () => undefined);
  const connect = () =>
    pool.connect().catch((err: unknown) => {
      throw new ReferenceStoreUnavailableError(`the asset database is unavailable (${String((err as Error).message)})`);
    });
  return {
    // One connection made at start: the first upload does not wait for a connection's setup.
    async init() {
      (await connect()).release();
    },
    async run<T>(hash: string, fn: () => Promise<T>): Promise<T> {
      const client = await connect();
      let broken = false;
      try {
        await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [hash]);
        try {
          return await fn();
        } finally {
          await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [hash]).catch(() => {
            broken = true;
          });
        }
      } finally {
        // A connection whose unlock failed may still hold the lock: it is closed, not reused.
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

/** The at-scale ReferenceStore: PostgreSQL at DATABASE_URL. */
export function createPgReferenceStore(connectionString: string, options?: SqlStoreOptions): SqlReferenceStore {
  const database = openDatabase<AssetTables>({ kind: "postgres", url: connectionString });
  return new SqlReferenceStore(database, POSTGRES_LIST, advisoryHashLock(connectionString), options);
}
