import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import type { PrivatePackRepository } from "../../src/private-packs/store/private-pack-repository.ts";
import { openPrivatePackRepository } from "../../src/private-packs/store/sql-private-pack-repository.ts";
import { privatePackRepositoryConformance } from "./repository-conformance.ts";

const opened: PrivatePackRepository[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

let dir: string;
let database: TestDatabase;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "private-packs-"));
  database = await createTestDatabase("private_packs");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await database.drop();
});

let n = 0;
privatePackRepositoryConformance("SQLite", async () => {
  const repo = await openPrivatePackRepository({ sqliteFile: join(dir, `r${n++}.sqlite`) });
  opened.push(repo);
  return repo;
});

privatePackRepositoryConformance("PostgreSQL", async () => {
  for (const table of [
    "private_versions",
    "private_nodes",
    "private_tokens",
    "private_upload_grants",
    "private_publishers",
    "private_revision",
    "private_pack_migration",
    "private_pack_migration_lock",
  ])
    await database.run(`DROP TABLE IF EXISTS ${table}`);
  const repo = await openPrivatePackRepository({ databaseUrl: database.url, sqliteFile: "" });
  opened.push(repo);
  return repo;
});
