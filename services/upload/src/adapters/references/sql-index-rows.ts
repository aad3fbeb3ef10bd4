import { metadataEntries } from "../../domain/metadata-index.ts";
import type { InsertObject } from "kysely";
import type { AssetDb, AssetTables } from "./asset-tables.ts";

/** Rows a multi-row INSERT carries (well under both databases' parameter limits). */
const INSERT_BATCH = 200;

type IndexTable = "asset_tags" | "asset_tag_names" | "asset_meta";

/** Rows of one index table, several a statement; a row already there is kept. */
async function insertRows<T extends IndexTable>(tx: AssetDb, table: T, rows: InsertObject<AssetTables, T>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    await tx
      .insertInto(table)
      .values(rows.slice(i, i + INSERT_BATCH))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

/**
 * `asset_tags` indexes the record's tags (already unique in JavaScript), and `asset_tag_names`
 * remembers that the owner used them. A record written before the routes refused text the
 * database cannot keep whole may hold a tag the database stored folded onto another (SQLite cut
 * `".\u0000"` to `"."`; `pg` sent `"\ud800"` as U+FFFD): the second row of the same tag is the
 * same index entry, not a failure (hence ON CONFLICT DO NOTHING).
 */
export async function insertTags(tx: AssetDb, id: string, owner: string, tags: string[]): Promise<void> {
  await insertRows(
    tx,
    "asset_tags",
    tags.map((tag) => ({ ref_id: id, owner, tag })),
  );
  await insertRows(
    tx,
    "asset_tag_names",
    tags.map((tag) => ({ owner, tag })),
  );
}

export async function insertMetadata(tx: AssetDb, id: string, owner: string, metadata: Record<string, unknown>): Promise<void> {
  await insertRows(
    tx,
    "asset_meta",
    metadataEntries(metadata).map((entry) => ({ ref_id: id, owner, entry })),
  );
}
