import { describe, expect, it } from "vitest";
import { createTestDatabase } from "@app/testkit/postgres";
import { createPgReferenceStore } from "../src/adapters/references/pg-reference-store.ts";
import { ReferenceStoreUnavailableError } from "../src/adapters/references/reference-store.ts";
import { toApiFailure } from "../src/http/error-handler.ts";
import {
  addsTheFoldedTag,
  adoptsUnversioned,
  describePostgresConformance,
  OLD_SCHEMA,
  PAGINGS,
  startTogether,
  unversionedSchema,
  upgrades,
} from "./reference-store-cases.ts";
import { OWNER } from "./reference-store-conformance.ts";

// The ReferenceStore on PostgreSQL (DATABASE_URL); every filtered page walked: reference-store-postgres-walked.test.ts;
// the same on a SQLite file: reference-store-sqlite.test.ts.

describePostgresConformance(PAGINGS[0]);

describe("PostgreSQL shared by replicas", () => {
  it("stores starting at once on a new database make its tables once, and all open", async () => {
    const db = await createTestDatabase("refs_start");
    const stores = Array.from({ length: 4 }, () => createPgReferenceStore(db.url));
    try {
      await startTogether(stores);
    } finally {
      for (const store of stores) await store.close();
      await db.drop();
    }
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
    await expect(
      store.create({ owner: OWNER, hash: "b".repeat(64), name: "x.png", size: 1, mimeType: "image/png", tags: [] }),
    ).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    await expect(store.withHashLock("b".repeat(64), async () => 1)).rejects.toBeInstanceOf(ReferenceStoreUnavailableError);
    expect(await store.ping()).toBe(false);
    expect(toApiFailure(new ReferenceStoreUnavailableError("x"))).toMatchObject({ code: "unavailable", status: 503 });
    await store.close();
  });
});

/**
 * Records written before the routes refused such text (`isStorableText` in the contracts) may hold a tag
 * the database keeps otherwise than JavaScript does: `asset_tags` then holds it folded onto
 * another tag. Adding that other tag later must not insert the same row twice (a 500).
 */
describe("records holding a tag the database folds onto another (written before such text was refused)", () => {
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

describe("a store made before its schema had versions (a migration table) is adopted", () => {
  it("PostgreSQL: a database made before the schema had versions is adopted as it is", async () => {
    const db = await createTestDatabase("refs_unversioned");
    for (const statement of unversionedSchema("postgres")) await db.run(statement);
    const store = createPgReferenceStore(db.url);
    try {
      await adoptsUnversioned(store);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
