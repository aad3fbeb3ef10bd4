import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSqliteReferenceStore } from "../src/adapters/references/sqlite-reference-store.ts";
import {
  addsTheFoldedTag,
  adoptsUnversioned,
  OLD_SCHEMA,
  PAGINGS,
  startTogether,
  unversionedSchema,
  upgrades,
} from "./reference-store-cases.ts";
import { describeReferenceStoreConformance, NO_FILTER, OWNER } from "./reference-store-conformance.ts";

// The ReferenceStore on a SQLite file (embedded); the same on PostgreSQL: reference-store-postgres.test.ts.

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

describe("SQLite file shared by processes (replicas on one DATA_DIR)", () => {
  it("stores starting at once on a new file make its tables once, and both open", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-start-"));
    const file = join(dir, "assets.sqlite");
    // Each store has its own thread and connection to the file, as another process would.
    const stores = Array.from({ length: 4 }, () => createSqliteReferenceStore(file));
    try {
      await startTogether(stores);
    } finally {
      for (const store of stores) await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("another process's records are seen, both write, and a write lock left by a killed process is taken over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-sqlite-shared-"));
    const file = join(dir, "assets.sqlite");
    const here = createSqliteReferenceStore(file);
    await here.init();
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures/hold-reference-store.ts"), file], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const id = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
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
    const writing = here
      .create({ owner: OWNER, hash: "d".repeat(64), name: "mine.png", size: 1, mimeType: "image/png", tags: ["held"] })
      .then((r) => {
        written = true;
        return r;
      });
    await new Promise((r) => setTimeout(r, 300));
    expect(written).toBe(false);
    child.kill("SIGKILL");
    await once(child, "exit");
    const mine = await writing;
    expect((await here.get(mine.reference.id, OWNER))?.name).toBe("mine.png");
    expect(
      (await here.list({ ...NO_FILTER, tagsAll: ["held"], tagsNone: [], sort: "name", order: "asc", limit: 10, offset: 0 })).total,
    ).toBe(2);
    // The killed transaction's insert was rolled back.
    expect(
      (await here.tagCounts({ owner: OWNER, includeZero: true, order: "name_asc", limit: 10, offset: 0 })).tags.map((t) => t.name),
    ).toEqual(["held"]);
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
  it("SQLite: '.\\u0000' kept as '.', then '.' added, replaced and removed around it", async () => {
    const store = createSqliteReferenceStore(":memory:");
    await addsTheFoldedTag(store, ".\u0000", ".");
    await store.close();
  });
});

/**
 * A store an earlier version made (before owners, previews, last access and the metadata index),
 * on an existing DATA_DIR or database: init brings it up to date in place, its records kept, owned
 * by "" until ASSET_LEGACY_OWNER hands them to a key's principal.
 */
describe("a store made before owners is brought up to date in place", () => {
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
});

describe("a store made before its schema had versions (a migration table) is adopted", () => {
  it("SQLite: an assets.sqlite made before the schema had versions is adopted as it is", async () => {
    const dir = await mkdtemp(join(tmpdir(), "refs-unversioned-"));
    const file = join(dir, "assets.sqlite");
    const { Database } = createRequire(import.meta.url)("node-sqlite3-wasm") as typeof import("node-sqlite3-wasm");
    const old = new Database(file);
    for (const statement of unversionedSchema("sqlite")) old.exec(statement);
    old.close();
    const store = createSqliteReferenceStore(file);
    try {
      await adoptsUnversioned(store);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
