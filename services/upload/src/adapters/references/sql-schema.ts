import type { SqlDriver, SqlExecutor } from "./sql-driver.ts";
import { insertMetadata } from "./sql-index-rows.ts";

/** Indexes of the current shape, shared by both dialects: every list is one owner's, so each sort key leads with the owner. */
const INDEXES = [
  "CREATE UNIQUE INDEX IF NOT EXISTS asset_refs_owner_origin ON asset_refs (owner, hash, origin) WHERE origin IS NOT NULL",
  "CREATE INDEX IF NOT EXISTS asset_refs_hash ON asset_refs (hash)",
  "CREATE INDEX IF NOT EXISTS asset_refs_owner_created ON asset_refs (owner, created_at, id)",
  "CREATE INDEX IF NOT EXISTS asset_refs_owner_updated ON asset_refs (owner, updated_at, id)",
  "CREATE INDEX IF NOT EXISTS asset_refs_owner_name ON asset_refs (owner, name, id)",
  "CREATE INDEX IF NOT EXISTS asset_refs_owner_size ON asset_refs (owner, size, id)",
  "CREATE INDEX IF NOT EXISTS asset_refs_owner_access ON asset_refs (owner, last_access_time, id)",
  "CREATE INDEX IF NOT EXISTS asset_tags_owner_tag ON asset_tags (owner, tag, ref_id)",
  "CREATE INDEX IF NOT EXISTS asset_meta_owner_entry ON asset_meta (owner, entry, ref_id)",
];

/** Indexes of the shape before owners (a store made by an earlier version has them). */
const OLD_INDEXES = ["asset_refs_origin", "asset_refs_created", "asset_refs_updated", "asset_refs_name", "asset_refs_size", "asset_tags_tag"];

/** Columns added since the first shape, with how an existing row gets its value. */
const ADDED_COLUMNS: { table: string; column: string; definition: string; backfill?: string }[] = [
  { table: "asset_refs", column: "owner", definition: "TEXT NOT NULL DEFAULT ''" },
  { table: "asset_refs", column: "preview_id", definition: "TEXT" },
  { table: "asset_refs", column: "last_access_time", definition: "TEXT", backfill: "UPDATE asset_refs SET last_access_time = created_at WHERE last_access_time IS NULL" },
  { table: "asset_tags", column: "owner", definition: "TEXT NOT NULL DEFAULT ''" },
];

/**
 * Create the tables in their current shape, or bring a store an earlier version made (on an
 * existing DATA_DIR or database) up to it, in the caller's one transaction: missing columns
 * are added, old indexes replaced, and the tag-name and metadata indexes filled from the
 * records. Records from before owners get owner "" (see adoptUnowned). Running it again changes nothing.
 */
export async function migrateSchema(tx: SqlExecutor, db: SqlDriver): Promise<void> {
  for (const statement of db.schema) await tx.run(statement);
  const columns = new Map<string, Set<string>>();
  for (const table of new Set(ADDED_COLUMNS.map((c) => c.table))) {
    columns.set(table, new Set((await tx.all(db.columnsQuery, [table])).map((r) => String(r.name))));
  }
  const fromBeforeOwners = !columns.get("asset_refs")!.has("owner");
  for (const added of ADDED_COLUMNS) {
    if (columns.get(added.table)!.has(added.column)) continue;
    await tx.run(`ALTER TABLE ${added.table} ADD COLUMN ${added.column} ${added.definition}`);
    if (added.backfill) await tx.run(added.backfill);
  }
  for (const name of OLD_INDEXES) await tx.run(`DROP INDEX IF EXISTS ${name}`);
  for (const statement of INDEXES) await tx.run(statement);
  if (fromBeforeOwners) {
    // "WHERE true": SQLite reads ON CONFLICT after a bare SELECT as part of a join.
    await tx.run("INSERT INTO asset_tag_names (owner, tag) SELECT DISTINCT owner, tag FROM asset_tags WHERE true ON CONFLICT DO NOTHING");
    for (const row of await tx.all("SELECT id, owner, user_metadata FROM asset_refs")) {
      await insertMetadata(tx, String(row.id), String(row.owner), JSON.parse(String(row.user_metadata)) as Record<string, unknown>);
    }
  }
}
