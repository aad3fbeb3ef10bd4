import { sql, type Kysely, type Migration } from "kysely";
import { dialectOf } from "@app/sql";
import { metadataEntries } from "../../../domain/metadata-index.ts";

// A migration sees the database as it was when it was written, not as the store's types now
// describe it: its own rows are typed here and the builder is untyped.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** Columns added after the first version of the store, with how an existing row gets its value. */
const ADDED_COLUMNS = [
  { table: "asset_refs", column: "owner", ownerLike: true },
  { table: "asset_refs", column: "preview_id", ownerLike: false },
  { table: "asset_refs", column: "last_access_time", ownerLike: false },
  { table: "asset_tags", column: "owner", ownerLike: true },
] as const;

/** Indexes of the first version (before owners). */
const OLD_INDEXES = [
  "asset_refs_origin",
  "asset_refs_created",
  "asset_refs_updated",
  "asset_refs_name",
  "asset_refs_size",
  "asset_tags_tag",
];

/** Every list is one owner's, so each sort key's index leads with the owner. */
const SORT_INDEXES = [
  ["asset_refs_owner_created", "created_at"],
  ["asset_refs_owner_updated", "updated_at"],
  ["asset_refs_owner_name", "name"],
  ["asset_refs_owner_size", "size"],
  ["asset_refs_owner_access", "last_access_time"],
] as const;

async function createTables(db: Db): Promise<void> {
  const postgres = dialectOf(db) === "postgres";
  // Names, tags and timestamps compare byte-wise in both databases (SQLite's default; "C" in PostgreSQL).
  const sorted = postgres ? sql`text collate "C"` : sql`text`;
  await db.schema
    .createTable("asset_refs")
    .ifNotExists()
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("name", sorted, (c) => c.notNull())
    .addColumn("name_folded", sorted, (c) => c.notNull())
    .addColumn("size", postgres ? "bigint" : "integer", (c) => c.notNull())
    .addColumn("mime_type", "text", (c) => c.notNull())
    .addColumn("tags", "text", (c) => c.notNull())
    .addColumn("user_metadata", "text", (c) => c.notNull())
    .addColumn("system_metadata", "text")
    .addColumn("preview_id", "text")
    .addColumn("origin", "text")
    .addColumn("created_at", sorted, (c) => c.notNull())
    .addColumn("updated_at", sorted, (c) => c.notNull())
    .addColumn("last_access_time", sorted)
    .execute();
  await db.schema
    .createTable("asset_tags")
    .ifNotExists()
    .addColumn("ref_id", "text", (c) => c.notNull())
    .addColumn("owner", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("tag", sorted, (c) => c.notNull())
    .addPrimaryKeyConstraint("asset_tags_pkey", ["ref_id", "tag"])
    .execute();
  await db.schema
    .createTable("asset_tag_names")
    .ifNotExists()
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("tag", sorted, (c) => c.notNull())
    .addPrimaryKeyConstraint("asset_tag_names_pkey", ["owner", "tag"])
    .execute();
  await db.schema
    .createTable("asset_meta")
    .ifNotExists()
    .addColumn("ref_id", "text", (c) => c.notNull())
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("entry", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("asset_meta_pkey", ["ref_id", "entry"])
    .execute();
}

async function columnsOf(db: Db, table: string): Promise<Set<string>> {
  const query =
    dialectOf(db) === "postgres"
      ? sql<{
          name: string;
        }>`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table}`
      : sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`;
  return new Set((await query.execute(db)).rows.map((row) => row.name));
}

/** Add what a store of the first version lacks; answers whether it was one (it had no owners). */
async function addMissingColumns(db: Db): Promise<boolean> {
  const columns = { asset_refs: await columnsOf(db, "asset_refs"), asset_tags: await columnsOf(db, "asset_tags") };
  for (const { table, column, ownerLike } of ADDED_COLUMNS) {
    if (columns[table].has(column)) continue;
    await db.schema
      .alterTable(table)
      .addColumn(column, "text", (c) => (ownerLike ? c.notNull().defaultTo("") : c))
      .execute();
    if (column === "last_access_time")
      await db
        .updateTable("asset_refs")
        .set({ last_access_time: sql.ref("created_at") })
        .where("last_access_time", "is", null)
        .execute();
  }
  return !columns.asset_refs.has("owner");
}

async function createIndexes(db: Db): Promise<void> {
  for (const name of OLD_INDEXES) await db.schema.dropIndex(name).ifExists().execute();
  await db.schema
    .createIndex("asset_refs_owner_origin")
    .ifNotExists()
    .unique()
    .on("asset_refs")
    .columns(["owner", "hash", "origin"])
    .where(sql.ref("origin"), "is not", null)
    .execute();
  await db.schema.createIndex("asset_refs_hash").ifNotExists().on("asset_refs").column("hash").execute();
  for (const [name, key] of SORT_INDEXES)
    await db.schema.createIndex(name).ifNotExists().on("asset_refs").columns(["owner", key, "id"]).execute();
  await db.schema.createIndex("asset_tags_owner_tag").ifNotExists().on("asset_tags").columns(["owner", "tag", "ref_id"]).execute();
  await db.schema.createIndex("asset_meta_owner_entry").ifNotExists().on("asset_meta").columns(["owner", "entry", "ref_id"]).execute();
}

/** A first-version store's records get the tag-name and metadata indexes the routes read. */
async function fillIndexes(db: Db): Promise<void> {
  // "WHERE true": SQLite reads ON CONFLICT after a bare SELECT as part of a join.
  const names = db
    .selectFrom("asset_tags")
    .select(["owner", "tag"])
    .distinct()
    .where(sql<boolean>`true`);
  await db
    .insertInto("asset_tag_names")
    .columns(["owner", "tag"])
    .expression(names)
    .onConflict((oc) => oc.doNothing())
    .execute();
  const records: { id: string; owner: string; user_metadata: string }[] = await db
    .selectFrom("asset_refs")
    .select(["id", "owner", "user_metadata"])
    .execute();
  for (const record of records) {
    const rows = metadataEntries(JSON.parse(record.user_metadata) as Record<string, unknown>).map((entry) => ({
      ref_id: record.id,
      owner: record.owner,
      entry,
    }));
    // A batch's parameters stay well under both databases' limits.
    for (let i = 0; i < rows.length; i += 200)
      await db
        .insertInto("asset_meta")
        .values(rows.slice(i, i + 200))
        .onConflict((oc) => oc.doNothing())
        .execute();
  }
}

/**
 * The tables as the store had them before it moved to Kysely. A database that store made (on an
 * existing DATA_DIR or DATABASE_URL) has no migration table yet and runs this one too: every
 * statement is "if not exists", so a store of that last shape is left as it is, and a store of
 * the first version (before owners, previews, last access and the metadata index) is brought up
 * to it in place, its records owned by "" until adoptUnowned hands them to a key's principal.
 */
export const assetReferences: Migration = {
  async up(db: Db) {
    await createTables(db);
    const firstVersion = await addMissingColumns(db);
    await createIndexes(db);
    if (firstVersion) await fillIndexes(db);
  },
};
