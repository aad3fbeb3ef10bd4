/**
 * How the private-pack repository reaches its database. Statements use `?` placeholders (the
 * PostgreSQL runner numbers them), so both implementations run the same queries; only the
 * driver and the table definitions differ.
 */
export interface SqlRunner {
  readonly kind: "sqlite" | "postgres";
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Rows changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
  /** `fn` runs in one transaction on one connection; a throw rolls it back. */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A unique or primary-key violation, in either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return e?.code === "23505" || e?.code === "SQLITE_CONSTRAINT_PRIMARYKEY" || e?.code === "SQLITE_CONSTRAINT_UNIQUE";
}
