import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { SqlRunner } from "./sql-runner.ts";

/**
 * SQLite through better-sqlite3 on the calling thread. The private-pack tables are small and
 * written by publishers only (a few rows per publish), so a worker thread would cost more than
 * the statements; WAL and a busy timeout let the asset store's connection share the file.
 */
export function openSqliteRunner(file: string): SqlRunner {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  return sqliteRunner(db);
}

function sqliteRunner(db: Database.Database): SqlRunner {
  const runner: SqlRunner = {
    kind: "sqlite",
    all: async <T>(sql: string, params: unknown[] = []) => db.prepare(sql).all(...params.map(bindable)) as T[],
    run: async (sql, params = []) => db.prepare(sql).run(...params.map(bindable)).changes,
    async transaction(fn) {
      // Statements are synchronous, so nothing else runs on this connection between BEGIN and COMMIT
      // unless fn awaits something other than this runner; fn only uses the runner it is given.
      db.exec("BEGIN IMMEDIATE");
      try {
        const out = await fn(runner);
        db.exec("COMMIT");
        return out;
      } catch (err) {
        db.exec("ROLLBACK");
        throw err;
      }
    },
    close: async () => void db.close(),
  };
  return runner;
}

/** SQLite binds no booleans. */
function bindable(v: unknown): unknown {
  return typeof v === "boolean" ? (v ? 1 : 0) : v;
}
