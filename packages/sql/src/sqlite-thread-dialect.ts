import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from "kysely";
import type { SqliteWorkerOptions } from "./sqlite-messages.ts";
import { SqliteThread } from "./sqlite-thread.ts";

/** The one connection, to the thread's database. */
class SqliteThreadConnection implements DatabaseConnection {
  constructor(private readonly thread: SqliteThread) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, changes } = await this.thread.query(query.sql, query.parameters);
    return { rows: rows as R[], numAffectedRows: changes === undefined ? undefined : BigInt(changes) };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the SQLite thread does not stream rows");
  }
}

/**
 * One connection, lent to one holder at a time in the order asked (a statement, or a
 * transaction from BEGIN to COMMIT): a transaction never interleaves with another request's statements.
 */
class SqliteThreadDriver implements Driver {
  private thread: SqliteThread | null = null;
  private connection: SqliteThreadConnection | null = null;
  private tail: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  constructor(private readonly options: SqliteWorkerOptions) {}

  async init(): Promise<void> {
    this.thread = new SqliteThread(this.options);
    this.connection = new SqliteThreadConnection(this.thread);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.release = release;
    return this.connection!;
  }

  async releaseConnection(): Promise<void> {
    const release = this.release;
    this.release = null;
    release?.();
  }

  // IMMEDIATE takes the write lock at BEGIN: a transaction that reads and then writes cannot
  // fail midway because another process wrote in between.
  async beginTransaction(): Promise<void> {
    await this.thread!.exec("BEGIN IMMEDIATE");
  }

  async commitTransaction(): Promise<void> {
    await this.thread!.exec("COMMIT");
  }

  async rollbackTransaction(): Promise<void> {
    await this.thread!.rollback();
  }

  async destroy(): Promise<void> {
    const previous = this.tail;
    await previous;
    await this.thread?.close();
  }
}

/**
 * SQLite runs DDL inside a transaction, and this driver's BEGIN IMMEDIATE takes the file's write
 * lock: Kysely's Migrator then runs in one transaction that excludes every other connection's
 * run, in this process or another (Kysely's own SQLite adapter takes no lock and no transaction,
 * so stores starting at once on one file would each run the same migration).
 */
class SqliteThreadAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/**
 * Kysely's SQLite dialect (its adapter, compiler and introspector) with better-sqlite3 on a
 * worker thread (sqlite-worker.ts) instead of on the event loop.
 */
export class SqliteThreadDialect implements Dialect {
  constructor(private readonly options: SqliteWorkerOptions) {}

  createAdapter() {
    return new SqliteThreadAdapter();
  }

  createDriver(): Driver {
    return new SqliteThreadDriver(this.options);
  }

  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }

  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}
