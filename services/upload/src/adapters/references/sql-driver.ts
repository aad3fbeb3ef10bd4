/**
 * How the SQL store reaches its database. Statements use `?` placeholders (the Postgres driver
 * numbers them), so both implementations run the very same queries below; only the table
 * definitions, the driver and the lock differ.
 */
export interface SqlExecutor {
  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Rows changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
}

export interface SqlDriver extends SqlExecutor {
  readonly kind: "sqlite" | "postgres";
  /** Statements that create the tables in their current shape, run in one transaction. */
  readonly schema: string[];
  /** A query answering the column names (`name`) of the table given as its one parameter. */
  readonly columnsQuery: string;
  /** The dialect's `(haystack, needle)` substring position: 1-based, 0 when absent. */
  readonly positionFunction: "instr" | "strpos";
  /** The ids (column `id`) every one of `sets` holds, each once: sets are SELECTs of a column `id`, each naming an id once. */
  intersection(sets: string[]): string;
  /** `asset_refs r`, read through its sort index `index` in that index's order (see SqlReferenceStore.list). */
  walkedInOrder(index: string): string;
  /** `id` is one of the subquery's `ids`, tested row by row as the rows come (a hash probe), never turned into a join. */
  memberRowByRow(id: string, ids: string): string;
  /** `id` is one of the subquery's `ids`, answered by looking up each of those ids. */
  memberByLookup(id: string, ids: string): string;
  /**
   * Whether a filtered list answers its total and its page in one statement over one
   * materialized set of matches (a MATERIALIZED CTE and a LATERAL join): PostgreSQL, where it
   * halves the list; SQLite keeps two statements.
   */
  readonly sharesMatches: boolean;
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A set's SELECT answering each id once (a record may match several tags of one `tags_any`, several values of one list). */
export function distinct(set: string): string {
  return set.replace(/^SELECT /, "SELECT DISTINCT ");
}
