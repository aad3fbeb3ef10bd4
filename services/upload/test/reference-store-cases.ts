import { afterAll, beforeAll, describe, expect } from "vitest";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import { createPgReferenceStore } from "../src/adapters/references/pg-reference-store.ts";
import type { ReferenceStore } from "../src/adapters/references/reference-store.ts";
import { metadataConditions, metadataEntries } from "../src/domain/metadata-index.ts";
import { describeReferenceStoreConformance, NO_FILTER, OWNER } from "./reference-store-conformance.ts";

// A filtered page of many matches walks the sort index instead of reading each match (from
// WALK_FROM_MATCHES on): the same suite with every filtered page walked holds the same answers.
export const PAGINGS = [
  ["", {}],
  [", every filtered page walked", { walkFromMatches: 1 }],
] as const;

/** The conformance suite on PostgreSQL with one paging, in a database of its own (a file per paging, so they run at once). */
export function describePostgresConformance([paging, options]: (typeof PAGINGS)[number]): void {
  describe("PostgreSQL", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase("refs");
    });
    afterAll(async () => {
      await db.drop();
    });

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
  });
}

/** A record holding a tag the database folded onto `folded`: adding, replacing and removing around it (see the test files). */
export async function addsTheFoldedTag(store: ReferenceStore, kept: string, folded: string) {
  await store.init();
  const { reference } = await store.create({
    owner: OWNER,
    hash: "e".repeat(64),
    name: "x.png",
    size: 1,
    mimeType: "image/png",
    tags: ["keep", kept],
  });
  const added = await store.addTags(reference.id, OWNER, [folded]);
  expect(added).toMatchObject({ added: [folded], alreadyPresent: [] });
  expect(added!.reference.tags).toEqual(["keep", kept, folded]);
  const replaced = await store.update(reference.id, OWNER, { tags: [folded, kept, "other"] });
  expect(replaced!.tags).toEqual([folded, kept, "other"]);
  const removed = await store.removeTags(reference.id, OWNER, [kept]);
  expect(removed!.reference.tags).toEqual([folded, "other"]);
  const counts = await store.tagCounts({ owner: OWNER, includeZero: false, order: "name_asc", limit: 10, offset: 0 });
  expect(counts.total).toBe(2);
  expect(counts.tags).toEqual(
    expect.arrayContaining([
      { name: folded, count: 1 },
      { name: "other", count: 1 },
    ]),
  );
  expect(
    (await store.list({ ...NO_FILTER, tagsAll: [folded], tagsNone: [], sort: "name", order: "asc", limit: 10, offset: 0 })).total,
  ).toBe(1);
}

/** The tables of a store made before owners, previews, last access and the metadata index, with one record. */
export const OLD_SCHEMA = [
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
export const OLD_ID = "11111111-1111-4111-8111-111111111111";

/** `init` brings the old store up to date in place; its record kept, owned by "" until adopted. */
export async function upgrades(store: ReferenceStore) {
  await store.init();
  await store.init(); // and again: nothing changes
  expect(await store.get(OLD_ID, OWNER)).toBeNull();
  expect(await store.adoptUnowned(OWNER)).toBe(1);
  const old = (await store.get(OLD_ID, OWNER))!;
  expect(old).toMatchObject({
    name: "old.png",
    tags: ["input", "old"],
    userMetadata: { epoch: 3 },
    previewId: null,
    lastAccessTime: "2025-01-01T00:00:00.000Z",
  });
  const metadata = metadataConditions({ epoch: 3 });
  expect(
    (await store.list({ ...NO_FILTER, tagsAll: ["old"], metadata, sort: "last_access_time", order: "desc", limit: 10, offset: 0 })).total,
  ).toBe(1);
  expect((await store.tagCounts({ owner: OWNER, includeZero: true, order: "name_asc", limit: 10, offset: 0 })).tags).toEqual([
    { name: "input", count: 1 },
    { name: "old", count: 1 },
  ]);
  // The (owner, hash, origin) rule replaced (hash, origin): the same upload by another owner gets its own record.
  const again = await store.create({
    owner: "other",
    hash: "a".repeat(64),
    name: "x",
    size: 5,
    mimeType: "image/png",
    tags: [],
    origin: "upload:input:",
  });
  expect(again.created).toBe(true);
  expect(
    (
      await store.create({
        owner: OWNER,
        hash: "a".repeat(64),
        name: "x",
        size: 5,
        mimeType: "image/png",
        tags: [],
        origin: "upload:input:",
      })
    ).reference.id,
  ).toBe(OLD_ID);
}

/**
 * The tables as the store made them before its schema had versions (a migration table), with one
 * owned, tagged record carrying metadata: `sorted` is the type of the byte-wise compared columns.
 */
export function unversionedSchema(kind: "sqlite" | "postgres"): string[] {
  const sorted = kind === "postgres" ? 'text COLLATE "C"' : "TEXT";
  const size = kind === "postgres" ? "bigint" : "INTEGER";
  return [
    `CREATE TABLE asset_refs (
      id TEXT PRIMARY KEY, owner TEXT NOT NULL DEFAULT '', hash TEXT NOT NULL, name ${sorted} NOT NULL, name_folded ${sorted} NOT NULL, size ${size} NOT NULL,
      mime_type TEXT NOT NULL, tags TEXT NOT NULL, user_metadata TEXT NOT NULL, system_metadata TEXT, preview_id TEXT, origin TEXT,
      created_at ${sorted} NOT NULL, updated_at ${sorted} NOT NULL, last_access_time ${sorted})`,
    `CREATE TABLE asset_tags (ref_id TEXT NOT NULL, owner TEXT NOT NULL DEFAULT '', tag ${sorted} NOT NULL, PRIMARY KEY (ref_id, tag))`,
    `CREATE TABLE asset_tag_names (owner TEXT NOT NULL, tag ${sorted} NOT NULL, PRIMARY KEY (owner, tag))`,
    "CREATE TABLE asset_meta (ref_id TEXT NOT NULL, owner TEXT NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (ref_id, entry))",
    "CREATE UNIQUE INDEX asset_refs_owner_origin ON asset_refs (owner, hash, origin) WHERE origin IS NOT NULL",
    "CREATE INDEX asset_refs_hash ON asset_refs (hash)",
    "CREATE INDEX asset_refs_owner_created ON asset_refs (owner, created_at, id)",
    "CREATE INDEX asset_refs_owner_updated ON asset_refs (owner, updated_at, id)",
    "CREATE INDEX asset_refs_owner_name ON asset_refs (owner, name, id)",
    "CREATE INDEX asset_refs_owner_size ON asset_refs (owner, size, id)",
    "CREATE INDEX asset_refs_owner_access ON asset_refs (owner, last_access_time, id)",
    "CREATE INDEX asset_tags_owner_tag ON asset_tags (owner, tag, ref_id)",
    "CREATE INDEX asset_meta_owner_entry ON asset_meta (owner, entry, ref_id)",
    `INSERT INTO asset_refs VALUES ('${OLD_ID}', '${OWNER}', '${"a".repeat(64)}', 'kept.png', 'kept.png', 5, 'image/png', '["input"]', '{"epoch":3}',
      NULL, NULL, 'upload:input:', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z')`,
    `INSERT INTO asset_tags VALUES ('${OLD_ID}', '${OWNER}', 'input')`,
    `INSERT INTO asset_tag_names VALUES ('${OWNER}', 'input')`,
    ...metadataEntries({ epoch: 3 }).map((entry) => `INSERT INTO asset_meta VALUES ('${OLD_ID}', '${OWNER}', '${entry}')`),
  ];
}

/** `init` adopts a store made before its schema had versions: nothing to move, its record read and found as before. */
export async function adoptsUnversioned(store: ReferenceStore) {
  await store.init();
  await store.init();
  expect(await store.get(OLD_ID, OWNER)).toMatchObject({
    name: "kept.png",
    tags: ["input"],
    userMetadata: { epoch: 3 },
    lastAccessTime: "2025-01-02T00:00:00.000Z",
  });
  const page = { sort: "name", order: "asc", limit: 10, offset: 0 } as const;
  expect(
    (await store.list({ ...NO_FILTER, ...page, tagsAll: ["input"], metadata: metadataConditions({ epoch: 3 }) })).items.map((r) => r.id),
  ).toEqual([OLD_ID]);
  const again = await store.create({
    owner: OWNER,
    hash: "a".repeat(64),
    name: "x",
    size: 5,
    mimeType: "image/png",
    tags: [],
    origin: "upload:input:",
  });
  expect(again).toMatchObject({ created: false, reference: { id: OLD_ID } });
}

/**
 * Stores opened at once on one new database (replicas, or processes on one SQLite file) make its
 * tables once and all open: a record one of them writes, the last one reads.
 */
export async function startTogether(stores: ReferenceStore[]): Promise<void> {
  await Promise.all(stores.map((store) => store.init()));
  const { reference } = await stores[0]!.create({
    owner: OWNER,
    hash: "f".repeat(64),
    name: "one.png",
    size: 1,
    mimeType: "image/png",
    tags: [],
  });
  expect((await stores.at(-1)!.get(reference.id, OWNER))?.name).toBe("one.png");
}
