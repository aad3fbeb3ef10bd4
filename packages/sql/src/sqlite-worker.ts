import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { SqliteAnswer, SqliteRequest, SqliteRows, SqliteWorkerOptions } from "./sqlite-messages.ts";

/**
 * The thread that holds the SQLite connection (sqlite-thread.ts starts it): statements run here,
 * never on the event loop, and a lock held by another process is waited for here (busy_timeout).
 * It answers one message at a time, in order; the caller decides the order.
 */
const { file, busyTimeoutMs, cacheKiB } = workerData as SqliteWorkerOptions;

/** Prepared statements kept per text: the stores send a small fixed set of statement shapes. */
const MAX_PREPARED = 500;

function open(): Database.Database {
  const db = new Database(file, { timeout: busyTimeoutMs });
  // WAL: readers do not wait for a writer, and a commit syncs the log only at checkpoints.
  if (file !== ":memory:") db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma(`cache_size = -${cacheKiB}`);
  return db;
}

let db: Database.Database | null = null;
let openError: unknown = null;
try {
  db = open();
} catch (err) {
  // Answered to every request, so that the store reports it where it is used.
  openError = err;
}

const statements = new Map<string, Database.Statement>();

function prepared(conn: Database.Database, sql: string): Database.Statement {
  let statement = statements.get(sql);
  if (!statement) {
    if (statements.size >= MAX_PREPARED) statements.clear();
    statement = conn.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

function handle(conn: Database.Database, request: SqliteRequest): SqliteRows | null {
  switch (request.op) {
    case "query": {
      const statement = prepared(conn, request.sql);
      if (statement.reader) return { rows: statement.all(...request.params) as Record<string, unknown>[] };
      return { rows: [], changes: statement.run(...request.params).changes };
    }
    case "exec":
      conn.exec(request.sql);
      return null;
    case "rollback":
      // SQLite ends a transaction itself on some failures (a full disk, an interrupt).
      if (conn.inTransaction) conn.exec("ROLLBACK");
      return null;
    case "close":
      conn.close();
      return null;
  }
}

function answer(request: SqliteRequest): SqliteAnswer {
  try {
    if (!db) throw openError;
    return { id: request.id, result: handle(db, request) };
  } catch (err) {
    const { message, code } = err as { message?: unknown; code?: unknown };
    return { id: request.id, error: { message: String(message), code: typeof code === "string" ? code : undefined } };
  }
}

parentPort!.on("message", (request: SqliteRequest) => parentPort!.postMessage(answer(request)));
