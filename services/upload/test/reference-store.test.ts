import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, utimesSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import { createPgReferenceStore } from "../src/adapters/pg-reference-store.ts";
import { ReferenceStoreUnavailableError, type ReferenceStore } from "../src/adapters/reference-store.ts";
import { toUploadFailure } from "../src/routes/error-handler.ts";
import { createSqliteReferenceStore } from "../src/adapters/sqlite-reference-store.ts";
import { describeReferenceStoreConformance, NO_FILTER, OWNER } from "./reference-store-conformance.ts";

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
        await db.run("TRUNCATE asset_refs, asset_tags, asset_tag_names, asset_meta");
      },
    };
  });
});

describe("PostgreSQL going away", () => {
  it("reads as unavailable (503 at the routes), not as an internal error, and ping says so", async () => {
    const gone = await createTestDatabase("refs_gone");
    const store = createPgReferenceStore(gone.url);
    await store.init();
    await store.create({ owner: OWNER, hash: "b".repeat(64), name: "x.png", size: 1, mimeType: "image/png", tags: [] });
    await gone.drop();
    await expect(store.get("00000000-0000-4000-8000-000000000000", OWNER)).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    await expect(store.create({ owner: OWNER, hash: "b".repeat(64), name: "x.png", size: 1, mimeType: "image/png", tags: [] })).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    await expect(store.withHashLock("b".repeat(64), async () => 1)).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    expect(await store.ping()).toBe(false);
    expect(toUploadFailure(new ReferenceStoreUnavailableError("x"))).toMatchObject({ code: "unavailable", status: 503 });
    await store.close();
  });
});

describe("SQLite file shared by processes (replicas on one DATA_DIR)", () => {
  it("another process's records are seen, both write, and a lock left by a killed process is taken over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-shared-"));
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
    const here = createSqliteReferenceStore(file);
    await here.init();
    expect((await here.get(id, OWNER))?.name).toBe("held.png");
    const mine = await here.create({ owner: OWNER, hash: "d".repeat(64), name: "mine.png", size: 1, mimeType: "image/png", tags: ["held"] });
    expect((await here.list({ ...NO_FILTER, tagsAll: ["held"], tagsNone: [], sort: "name", order: "asc", limit: 10, offset: 0 })).total).toBe(2);
    child.kill("SIGKILL");
    await once(child, "exit");
    // A process killed inside a transaction leaves the library's lock directory behind; once it is
    // older than any transaction, the next statement removes it and goes on.
    mkdirSync(`${file}.lock`);
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    expect((await here.get(mine.reference.id, OWNER))?.name).toBe("mine.png");
    await here.close();
    const reopened = createSqliteReferenceStore(file);
    await reopened.init();
    expect((await reopened.get(id, OWNER))?.name).toBe("held.png");
    await reopened.close();
    await rm(dir, { recursive: true, force: true });
  });
});

/**
 * Records written before the routes refused such text (`isStorableText` in the contracts) may hold a tag
 * the database keeps otherwise than JavaScript does: `asset_tags` then holds it folded onto
 * another tag. Adding that other tag later must not insert the same row twice (a 500).
 */
describe("records holding a tag the database folds onto another (written before such text was refused)", () => {
  async function addsTheFoldedTag(store: ReferenceStore, kept: string, folded: string) {
    await store.init();
    const { reference } = await store.create({ owner: OWNER, hash: "e".repeat(64), name: "x.png", size: 1, mimeType: "image/png", tags: ["keep", kept] });
    const added = await store.addTags(reference.id, OWNER, [folded]);
    expect(added).toMatchObject({ added: [folded], alreadyPresent: [] });
    expect(added!.reference.tags).toEqual(["keep", kept, folded]);
    const replaced = await store.update(reference.id, OWNER, { tags: [folded, kept, "other"] });
    expect(replaced!.tags).toEqual([folded, kept, "other"]);
    const removed = await store.removeTags(reference.id, OWNER, [kept]);
    expect(removed!.reference.tags).toEqual([folded, "other"]);
    const counts = await store.tagCounts({ owner: OWNER, includeZero: false, order: "name_asc", limit: 10, offset: 0 });
    expect(counts.total).toBe(2);
    expect(counts.tags).toEqual(expect.arrayContaining([{ name: folded, count: 1 }, { name: "other", count: 1 }]));
    expect((await store.list({ ...NO_FILTER, tagsAll: [folded], tagsNone: [], sort: "name", order: "asc", limit: 10, offset: 0 })).total).toBe(1);
  }

  it("SQLite: '.\\u0000' kept as '.', then '.' added, replaced and removed around it", async () => {
    const store = createSqliteReferenceStore(":memory:");
    await addsTheFoldedTag(store, ".\u0000", ".");
    await store.close();
  });

  it("PostgreSQL: '\\ud800' kept as U+FFFD, then U+FFFD added, replaced and removed around it", async () => {
    const db = await createTestDatabase("refs_folded");
    const store = createPgReferenceStore(db.url);
    try {
      await addsTheFoldedTag(store, "\ud800", "\ufffd");
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
