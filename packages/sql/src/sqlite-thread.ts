import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { SqliteAnswer, SqliteRequest, SqliteRows, SqliteWorkerOptions } from "./sqlite-messages.ts";

type Request = SqliteRequest extends infer R ? (R extends SqliteRequest ? Omit<R, "id"> : never) : never;

/**
 * The worker, started from its compiled file beside the service's entry point in a bundle
 * (bundle-service emits `dist/sqlite-worker.js`), or from this folder's TypeScript when running
 * from source (tsx, vitest). Node 20 hands a worker no loader hooks, not even those of
 * `node --import tsx`, so from source the thread registers tsx's require hook itself first.
 */
function startWorker(options: SqliteWorkerOptions): Worker {
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./sqlite-worker.js", import.meta.url), { workerData: options });
  const require = createRequire(import.meta.url);
  const source = fileURLToPath(new URL("./sqlite-worker.ts", import.meta.url));
  const code = `require(${JSON.stringify(require.resolve("tsx/cjs/api"))}).register(); require(${JSON.stringify(source)});`;
  return new Worker(code, { eval: true, workerData: options });
}

/**
 * A SQLite database opened on a worker thread (sqlite-worker.ts), so that no statement runs on
 * the event loop: a filtered page over 1,000,000 records takes milliseconds of CPU, and a commit waits
 * for the disk. Each call is one message and one answer; the caller orders them.
 */
export class SqliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: SqliteRows | null) => void; reject: (e: Error) => void }>();
  private next = 0;
  private failure: Error | null = null;

  constructor(options: SqliteWorkerOptions) {
    this.worker = startWorker(options);
    this.worker.unref();
    this.worker.on("message", (answer: SqliteAnswer) => this.settle(answer));
    this.worker.on("error", (err) => this.fail(err));
    this.worker.on("exit", (code) => this.fail(new Error(`the SQLite thread exited (${code})`)));
  }

  /** Rows of a statement, or for one that returns none the rows it changed. */
  async query(sql: string, params: readonly unknown[]): Promise<SqliteRows> {
    return (await this.call({ op: "query", sql, params }))!;
  }

  async exec(sql: string): Promise<void> {
    await this.call({ op: "exec", sql });
  }

  async rollback(): Promise<void> {
    await this.call({ op: "rollback" });
  }

  async close(): Promise<void> {
    if (this.failure) return;
    await this.call({ op: "close" });
    await this.worker.terminate();
  }

  private settle(answer: SqliteAnswer): void {
    const waiter = this.pending.get(answer.id);
    if (!waiter) return;
    this.pending.delete(answer.id);
    if ("error" in answer) waiter.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
    else waiter.resolve(answer.result);
  }

  private fail(err: Error): void {
    this.failure = err;
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }

  private call(request: Request): Promise<SqliteRows | null> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.next++;
    this.worker.ref();
    return new Promise<SqliteRows | null>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    }).finally(() => {
      // An idle database keeps no process alive.
      if (this.pending.size === 0) this.worker.unref();
    });
  }
}
