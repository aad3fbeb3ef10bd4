import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import { createPgReferenceStore } from "../src/adapters/references/pg-reference-store.ts";
import { ReferenceStoreUnavailableError, type ReferenceStore } from "../src/adapters/references/reference-store.ts";
import { toApiFailure } from "../src/http/error-handler.ts";
import { createSqliteReferenceStore } from "../src/adapters/references/sqlite-reference-store.ts";
import { metadataConditions } from "../src/domain/metadata-index.ts";
import { describeReferenceStoreConformance, NO_FILTER, OWNER } from "./reference-store-conformance.ts";

// A filtered page of many matches walks the sort index instead of reading each match (from
// WALK_FROM_MATCHES on): the same suite with every filtered page walked holds the same answers.
const PAGINGS = [
  ["", {}],
  [", every filtered page walked", { walkFromMatches: 1 }],
] as const;

for (const [paging, options] of PAGINGS) {
  describeReferenceStoreConformance(`SQLite file (embedded)${paging}`, async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-"));
    const store = createSqliteReferenceStore(join(dir, "assets.sqlite"), options);
    return {
      store,
      async cleanup() {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
}

describe("PostgreSQL", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase("refs");
  });
  afterAll(async () => {
    await db.drop();
  });

  for (const [paging, options] of PAGINGS) {
    describeReferenceStoreConformance(`PostgreSQL (DATABASE_URL)${paging}`, async () => {
      const store = createPgReferenceStore(db.url, options);
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
  }
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
    expect(toApiFailure(new ReferenceStoreUnavailableError("x"))).toMatchObject({ code: "unavailable", status: 503 });
    await store.close();
  });
});

describe("SQLite file shared by processes (replicas on one DATA_DIR)", () => {
  it("another process's records are seen, both write, and a write lock left by a killed process is taken over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-shared-"));
    const file = join(dir, "assets.sqlite");
    const here = createSqliteReferenceStore(file);
    await here.init();
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures/hold-reference-store.ts"), file], { stdio: ["ignore", "pipe", "inherit"] });
    const id = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d: Buffer) => {
        out += String(d);
        const m = /ready (\S+)\nlocked\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`holder exited ${code}`)));
    });
    // Readers are not held up by the other process's open write transaction (WAL).
    expect((await here.get(id, OWNER))?.name).toBe("held.png");
    // A write waits for it (on the store's thread, not the event loop) and goes on once the
    // holder is killed inside its transaction, which the kernel's lock release ends.
    let written = false;
    const writing = here.create({ owner: OWNER, hash: "d".repeat(64), name: "mine.png", size: 1, mimeType: "image/png", tags: ["held"] }).then((r) => {
      written = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(written).toBe(false);
    child.kill("SIGKILL");
    await once(child, "exit");
    const mine = await writing;
    expect((await here.get(mine.reference.id, OWNER))?.name).toBe("mine.png");
    expect((await here.list({ ...NO_FILTER, tagsAll: ["held"], tagsNone: [], sort: "name", order: "asc", limit: 10, offset: 0 })).total).toBe(2);
    // The killed transaction's insert was rolled back.
    expect((await here.tagCounts({ owner: OWNER, includeZero: true, order: "name_asc", limit: 10, offset: 0 })).tags.map((t) => t.name)).toEqual(["held"]);
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

/**
 * A store an earlier version made (before owners, previews, last access and the metadata index),
 * on an existing DATA_DIR or database: init brings it up to date in place, its records kept, owned
 * by "" until ASSET_LEGACY_OWNER hands them to a key's principal.
 */
describe("a store made before owners is brought up to date in place", () => {
  const OLD_SCHEMA = [
    `CREATE TABLE asset_refs (
      id TEXT PRIMARY KEY, hash TEXT NOT NULL, name TEXT NOT NULL, name_folded TEXT NOT NULL, size INTEGER NOT NULL,
      mime_type TEXT NOT NULL, tags TEXT NOT NULL, user_metadata TEXT NOT NULL, system_metadata TEXT, origin TEXT,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    "CREATE TABLE asset_tags (ref_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (ref_id, tag))",
    "CREATE UNIQUE INDEX asset_refs_origin ON asset_refs (hash, origin) WHERE origin IS NOT NULL",
    "CREATE INDEX asset_refs_created ON asset_refs (created_at, id)",
    "CREATE INDEX asset_tags_tag ON asset_tags (tag, ref_id)",
    `INSERT INTO asset_refs VALUES ('11111111-1111-4111-8111-111111111111', '${"a".repeat(64)}', 'old.png', 'old.png', 5, 'image/png',
      '["input","old"]', '{"epoch":3}', NULL, 'upload:input:', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`,
    "INSERT INTO asset_tags VALUES ('11111111-1111-4111-8111-111111111111', 'input'), ('11111111-1111-4111-8111-111111111111', 'old')",
  ];
  const OLD_ID = "11111111-1111-4111-8111-111111111111";

  async function upgrades(store: ReferenceStore) {
    await store.init();
    await store.init(); // and again: nothing changes
    expect(await store.get(OLD_ID, OWNER)).toBeNull();
    expect(await store.adoptUnowned(OWNER)).toBe(1);
    const old = (await store.get(OLD_ID, OWNER))!;
    expect(old).toMatchObject({ name: "old.png", tags: ["input", "old"], userMetadata: { epoch: 3 }, previewId: null, lastAccessTime: "2025-01-01T00:00:00.000Z" });
    const metadata = metadataConditions({ epoch: 3 });
    expect((await store.list({ ...NO_FILTER, tagsAll: ["old"], metadata, sort: "last_access_time", order: "desc", limit: 10, offset: 0 })).total).toBe(1);
    expect((await store.tagCounts({ owner: OWNER, includeZero: true, order: "name_asc", limit: 10, offset: 0 })).tags).toEqual([
      { name: "input", count: 1 },
      { name: "old", count: 1 },
    ]);
    // The (owner, hash, origin) rule replaced (hash, origin): the same upload by another owner gets its own record.
    const again = await store.create({ owner: "other", hash: "a".repeat(64), name: "x", size: 5, mimeType: "image/png", tags: [], origin: "upload:input:" });
    expect(again.created).toBe(true);
    expect((await store.create({ owner: OWNER, hash: "a".repeat(64), name: "x", size: 5, mimeType: "image/png", tags: [], origin: "upload:input:" })).reference.id).toBe(OLD_ID);
  }

  it("SQLite: an existing DATA_DIR's assets.sqlite", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-upgrade-"));
    const file = join(dir, "assets.sqlite");
    const { Database } = createRequire(import.meta.url)("node-sqlite3-wasm") as typeof import("node-sqlite3-wasm");
    const old = new Database(file);
    for (const statement of OLD_SCHEMA) old.exec(statement);
    old.close();
    const store = createSqliteReferenceStore(file);
    try {
      await upgrades(store);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("PostgreSQL: an existing database", async () => {
    const db = await createTestDatabase("refs_upgrade");
    for (const statement of OLD_SCHEMA) await db.run(statement);
    const store = createPgReferenceStore(db.url);
    try {
      await upgrades(store);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
