import { CompiledQuery, type Kysely } from "kysely";
import { openDatabase, type DatabaseConfig } from "@app/sql";
import { PRIVATE_PACK_MIGRATION_TABLE, PRIVATE_PACK_MIGRATIONS } from "./migrations/index.ts";
import type { SqlRunner } from "./sql-runner.ts";

/**
 * The repository's statements run through @app/sql's Kysely database (SQLite on a worker thread,
 * or PostgreSQL), after the private packs' migrations. `?` placeholders are numbered for PostgreSQL.
 */
export async function openKyselyRunner(config: DatabaseConfig): Promise<SqlRunner> {
  const database = openDatabase<unknown>(config);
  try {
    await database.migrate(PRIVATE_PACK_MIGRATIONS, PRIVATE_PACK_MIGRATION_TABLE);
  } catch (err) {
    await database.close();
    throw err;
  }
  return runnerOver(database.db, database.kind, () => database.close());
}

function runnerOver(db: Kysely<unknown>, kind: SqlRunner["kind"], close: () => Promise<void>): SqlRunner {
  const compiled = (text: string, params: unknown[]) =>
    CompiledQuery.raw(kind === "postgres" ? numbered(text) : text, params.map(bindable));
  const runner: SqlRunner = {
    kind,
    all: async <T>(text: string, params: unknown[] = []) => (await db.executeQuery(compiled(text, params))).rows as T[],
    run: async (text, params = []) => Number((await db.executeQuery(compiled(text, params))).numAffectedRows ?? 0),
    transaction: (fn) => db.transaction().execute((trx) => fn(runnerOver(trx, kind, async () => {}))),
    close,
  };
  return runner;
}

function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** SQLite binds no booleans. */
function bindable(v: unknown): unknown {
  return typeof v === "boolean" ? (v ? 1 : 0) : v;
}
