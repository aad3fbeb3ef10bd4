import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { Kysely, Migrator, PostgresDialect, type Dialect, type Migration } from "kysely";
import pg from "pg";
import { SqliteThreadDialect } from "./sqlite-thread-dialect.ts";
import { withUnavailableErrors } from "./unavailable.ts";

export type DatabaseConfig =
  | {
      kind: "sqlite";
      /** A file (its folder is made), or `:memory:`. */
      file: string;
      /** How long a statement waits for another process's transaction before the database is unavailable. */
      busyTimeoutMs?: number;
      /** SQLite's page cache, in KiB (SQLite's own default is 2 MiB). */
      cacheKiB?: number;
    }
  | { kind: "postgres"; url: string; maxConnections?: number };

export interface Database<DB> {
  readonly kind: DatabaseConfig["kind"];
  readonly db: Kysely<DB>;
  /**
   * Apply the migrations not yet applied, in the order of their names, each once in every
   * database however many processes start at once (PostgreSQL: under an advisory lock).
   * `table` records which ran: stores that share a database either share one list or keep
   * their lists under different tables.
   */
  migrate(migrations: Record<string, Migration>, table?: string): Promise<void>;
  close(): Promise<void>;
}

function sqliteDialect(config: Extract<DatabaseConfig, { kind: "sqlite" }>): Dialect {
  if (config.file !== ":memory:") mkdirSync(dirname(config.file), { recursive: true });
  return new SqliteThreadDialect({ file: config.file, busyTimeoutMs: config.busyTimeoutMs ?? 30_000, cacheKiB: config.cacheKiB ?? 2048 });
}

function postgresDialect(config: Extract<DatabaseConfig, { kind: "postgres" }>): Dialect {
  const pool = new pg.Pool({ connectionString: config.url, max: config.maxConnections ?? 10 });
  // An idle client that loses its server emits here; without a listener the process would exit.
  pool.on("error", () => undefined);
  return new PostgresDialect({ pool });
}

/**
 * A Kysely database: SQLite embedded (better-sqlite3 on a worker thread, in WAL mode) or
 * PostgreSQL at scale. Failures of the database itself throw DatabaseUnavailableError.
 */
export function openDatabase<DB>(config: DatabaseConfig): Database<DB> {
  const dialect = config.kind === "sqlite" ? sqliteDialect(config) : postgresDialect(config);
  const db = new Kysely<DB>({ dialect: withUnavailableErrors(dialect) });
  return {
    kind: config.kind,
    db,
    async migrate(migrations, table = "kysely_migration") {
      const provider = { getMigrations: async () => migrations };
      const migrator = new Migrator({ db, provider, migrationTableName: table, migrationLockTableName: `${table}_lock` });
      const { error } = await migrator.migrateToLatest();
      if (error) throw error instanceof Error ? error : new Error("a migration failed", { cause: error });
    },
    close: () => db.destroy(),
  };
}
