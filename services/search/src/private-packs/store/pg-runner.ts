import pg from "pg";
import type { SqlRunner } from "./sql-runner.ts";

/** PostgreSQL through a pool; `?` placeholders become `$1..$n`. */
export function openPgRunner(connectionString: string): SqlRunner {
  const pool = new pg.Pool({ connectionString, max: 4 });
  return {
    kind: "postgres",
    ...executor(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const out = await fn({ kind: "postgres", ...executor(client), transaction: () => Promise.reject(new Error("nested transaction")), close: async () => {} });
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

function executor(db: pg.Pool | pg.PoolClient): Pick<SqlRunner, "all" | "run"> {
  return {
    all: async <T>(sql: string, params: unknown[] = []) => (await db.query(numbered(sql), params)).rows as T[],
    run: async (sql, params = []) => (await db.query(numbered(sql), params)).rowCount ?? 0,
  };
}

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
