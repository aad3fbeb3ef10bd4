import { randomBytes } from "node:crypto";
import pg from "pg";
import { testEnv } from "./env.ts";

/** The shared test Postgres server (trust auth); each test run makes its own database on it. */
export const TEST_POSTGRES_URL = testEnv.POSTGRES_TEST_URL;

export interface TestDatabase {
  /** Connection string of the new database. */
  url: string;
  name: string;
  /** Run one statement on the new database, on a connection of its own. */
  run(sql: string): Promise<void>;
  /** Drop the database (closing whatever connections are left on it). */
  drop(): Promise<void>;
}

/** A new, uniquely named database on the test server, for one test run. */
export async function createTestDatabase(label: string, serverUrl = TEST_POSTGRES_URL): Promise<TestDatabase> {
  const name = `test_${label.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${process.pid}_${randomBytes(4).toString("hex")}`;
  await admin(serverUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    run: (sql) => admin(url.toString(), sql),
    drop: () => admin(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function admin(connectionString: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
