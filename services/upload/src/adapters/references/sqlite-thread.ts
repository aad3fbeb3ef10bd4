import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * A SQLite database (better-sqlite3, native) opened on a worker thread, so that no statement
 * runs on the event loop: a filtered page over 1,000,000 records is 10–20 ms of CPU, and a
 * commit waits for the disk. Each call is one message and one answer; the caller orders them
 * (SqliteDriver queues every statement and transaction of the process), so the thread runs one
 * statement at a time and a transaction's statements arrive between its BEGIN and COMMIT.
 * Another process holding the file is waited for on the thread (busy_timeout), never on the loop.
 */
export class SqliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private next = 0;
  private failure: Error | null = null;

  constructor(file: string, opts: { busyTimeoutMs: number; cacheKiB: number }) {
    // Resolved here, where node_modules is known (source or bundle), and handed to the thread.
    const driverPath = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driverPath, ...opts } });
    this.worker.unref();
    this.worker.on("message", (msg: { id: number; result?: unknown; error?: { message: string; code?: string } }) => {
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if (msg.error) waiter.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
      else waiter.resolve(msg.result);
    });
    const fail = (err: Error) => {
      this.failure = err;
      for (const w of this.pending.values()) w.reject(err);
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the SQLite thread exited (${code})`)));
  }

  /** Rows of a statement that returns rows; for one that does not, [] after running it. */
  all(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    return this.call("all", sql, params) as Promise<Record<string, unknown>[]>;
  }

  /** Rows changed. */
  run(sql: string, params: unknown[] = []): Promise<number> {
    return this.call("run", sql, params) as Promise<number>;
  }

  /** Statements without parameters (BEGIN, COMMIT, pragmas). */
  exec(sql: string): Promise<void> {
    return this.call("exec", sql, []) as Promise<void>;
  }

  /** Whether a transaction is open on the connection. */
  inTransaction(): Promise<boolean> {
    return this.call("inTransaction", "", []) as Promise<boolean>;
  }

  async close(): Promise<void> {
    if (this.failure) return;
    await this.call("close", "", []);
    await this.worker.terminate();
  }

  private call(op: string, sql: string, params: unknown[]): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.next++;
    this.worker.ref();
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, sql, params });
    }).finally(() => {
      // An idle store keeps no process alive.
      if (this.pending.size === 0) this.worker.unref();
    });
  }
}

/**
 * The thread's code, plain JavaScript evaluated by the Worker, so that it runs the same under
 * tsx, vitest and the bundled image without a loader. Prepared statements are kept per text
 * (the store sends a small fixed set of statement shapes), at most 500.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driverPath);
const { file, busyTimeoutMs, cacheKiB } = workerData;
let db;
let openError = null;
try {
  db = new Database(file, { timeout: busyTimeoutMs });
  if (file !== ":memory:") db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("cache_size = -" + cacheKiB);
  db.defaultSafeIntegers(false);
} catch (err) {
  openError = err;
}
const statements = new Map();
function prepared(sql) {
  let s = statements.get(sql);
  if (!s) {
    if (statements.size >= 500) statements.clear();
    s = db.prepare(sql);
    statements.set(sql, s);
  }
  return s;
}
parentPort.on("message", ({ id, op, sql, params }) => {
  try {
    if (openError) throw openError;
    let result;
    if (op === "all") {
      const s = prepared(sql);
      if (s.reader) result = s.all(params);
      else { s.run(params); result = []; }
    } else if (op === "run") result = prepared(sql).run(params).changes;
    else if (op === "exec") db.exec(sql);
    else if (op === "inTransaction") result = db.inTransaction;
    else if (op === "close") { db.close(); }
    parentPort.postMessage({ id, result });
  } catch (err) {
    parentPort.postMessage({ id, error: { message: String(err && err.message), code: err && err.code } });
  }
});
`;
