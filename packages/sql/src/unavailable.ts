import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from "kysely";

/** The database itself failed (unreachable, shut down, gone, locked past the wait): a route answers 503. */
export class DatabaseUnavailableError extends Error {}

/**
 * Whether a failure means the database is unavailable rather than the statement wrong:
 * PostgreSQL's connection failures, a server shutting down or refusing connections, a database
 * that is gone (SQLSTATE classes 08, 57, 53, 3D) and socket errors; SQLite's lock still held
 * after the wait, a file it cannot open, and its thread gone.
 */
export function isUnavailable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && /^(08|57|53|3D)/.test(code)) return true;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return true;
  if (code === "SQLITE_BUSY" || code === "SQLITE_CANTOPEN") return true;
  return (
    typeof message === "string" &&
    /Connection terminated|connection timeout|Client has encountered a connection error|SQLite thread exited/i.test(message)
  );
}

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUnavailable(err))
      throw new DatabaseUnavailableError(`the database is unavailable (${String((err as Error).message)})`, { cause: err });
    throw err;
  }
}

function guardedConnection(inner: DatabaseConnection): DatabaseConnection {
  return {
    executeQuery: <R>(query: CompiledQuery) => guard<QueryResult<R>>(() => inner.executeQuery<R>(query)),
    streamQuery: (query, chunkSize) => inner.streamQuery(query, chunkSize),
  };
}

/** A driver whose failures of the database itself are DatabaseUnavailableError; the connection it lends is the inner one, wrapped. */
class GuardedDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
  private readonly inner = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(private readonly driver: Driver) {}

  init = () => guard(() => this.driver.init());
  destroy = () => this.driver.destroy();

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await guard(() => this.driver.acquireConnection());
    let outer = this.wrapped.get(connection);
    if (!outer) {
      outer = guardedConnection(connection);
      this.wrapped.set(connection, outer);
      this.inner.set(outer, connection);
    }
    return outer;
  }

  releaseConnection = (c: DatabaseConnection) => this.driver.releaseConnection(this.inner.get(c)!);
  beginTransaction = (c: DatabaseConnection, s: TransactionSettings) => guard(() => this.driver.beginTransaction(this.inner.get(c)!, s));
  commitTransaction = (c: DatabaseConnection) => guard(() => this.driver.commitTransaction(this.inner.get(c)!));
  // The failure that led here is the one worth reporting; a connection too broken to roll back is discarded by its driver.
  rollbackTransaction = (c: DatabaseConnection) => this.driver.rollbackTransaction(this.inner.get(c)!).catch(() => undefined);
}

/** `dialect`, with its failures of the database itself thrown as DatabaseUnavailableError. */
export function withUnavailableErrors(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new GuardedDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
