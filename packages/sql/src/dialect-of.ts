import { PostgresAdapter, type Kysely } from "kysely";

/** Which database a Kysely instance talks to: for a migration whose DDL differs between the two. */
export function dialectOf(db: Kysely<unknown>): "sqlite" | "postgres" {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}
