import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import { createPgReferenceStore } from "../src/adapters/pg-reference-store.ts";
import { ReferenceStoreUnavailableError } from "../src/adapters/reference-store.ts";
import { toUploadFailure } from "../src/routes/error-handler.ts";
import { createSqliteReferenceStore } from "../src/adapters/sqlite-reference-store.ts";
import { describeReferenceStoreConformance } from "./reference-store-conformance.ts";

describeReferenceStoreConformance("SQLite file (embedded)", async () => {
  const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-"));
  const store = createSqliteReferenceStore(join(dir, "assets.sqlite"));
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe("PostgreSQL", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase("refs");
  });
  afterAll(async () => {
    await db.drop();
  });

  describeReferenceStoreConformance("PostgreSQL (DATABASE_URL)", async () => {
    const store = createPgReferenceStore(db.url);
    await store.init();
    return {
      store,
      async cleanup() {
        await store.close();
        // The next test starts from empty tables of this run's own database.
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        await client.query("TRUNCATE asset_refs, asset_tags");
        await client.end();
      },
    };
  });
});

describe("PostgreSQL going away", () => {
  it("reads as unavailable (503 at the routes), not as an internal error, and ping says so", async () => {
    const gone = await createTestDatabase("refs_gone");
    const store = createPgReferenceStore(gone.url);
    await store.init();
    await store.create({ hash: "b".repeat(64), name: "x.png", size: 1, mimeType: "image/png", tags: [] });
    await gone.drop();
    await expect(store.get("00000000-0000-4000-8000-000000000000")).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    await expect(store.create({ hash: "b".repeat(64), name: "x.png", size: 1, mimeType: "image/png", tags: [] })).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    await expect(store.withHashLock("b".repeat(64), async () => 1)).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    expect(await store.ping()).toBe(false);
    expect(toUploadFailure(new ReferenceStoreUnavailableError("x"))).toMatchObject({ code: "unavailable", status: 503 });
    await store.close();
  });
});

describe("SQLite file ownership", () => {
  it("a live owner process is refused by name; once it is killed with SIGKILL, the next start takes over with its records", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-kill-"));
    const file = join(dir, "assets.sqlite");
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures/hold-reference-store.ts"), file], { stdio: ["ignore", "pipe", "inherit"] });
    const id = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d: Buffer) => {
        out += String(d);
        const m = /ready (\S+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`holder exited ${code}`)));
    });
    expect(() => createSqliteReferenceStore(file)).toThrow(new RegExp(`in use by process ${child.pid}`));
    child.kill("SIGKILL");
    await once(child, "exit");
    const store = createSqliteReferenceStore(file);
    await store.init();
    expect((await store.get(id))?.name).toBe("held.png");
    await store.create({ hash: "d".repeat(64), name: "after.png", size: 1, mimeType: "image/png", tags: [] });
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps its records across a reopen and refuses a second process-level opener of the same file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-own-"));
    const file = join(dir, "assets.sqlite");
    const a = createSqliteReferenceStore(file);
    await a.init();
    const { reference } = await a.create({ hash: "a".repeat(64), name: "x.png", size: 1, mimeType: "image/png", tags: ["input"] });
    expect(() => createSqliteReferenceStore(file)).toThrow(/locked|in use/i);
    await a.close();
    const reopened = createSqliteReferenceStore(file);
    await reopened.init();
    expect(await reopened.get(reference.id)).toEqual(reference);
    await reopened.close();
    await rm(dir, { recursive: true, force: true });
  });
});
