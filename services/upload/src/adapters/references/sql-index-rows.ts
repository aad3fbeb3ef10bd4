import { metadataEntries } from "../../domain/metadata-index.ts";
import type { SqlExecutor } from "./sql-driver.ts";

/** Rows a multi-row INSERT carries (well under both databases' parameter limits). */
const INSERT_BATCH = 200;

/** Rows of one table, several a statement. */
async function insertRows(tx: SqlExecutor, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  const placeholders = `(${columns.map(() => "?").join(", ")})`;
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH);
    await tx.run(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${batch.map(() => placeholders).join(", ")} ON CONFLICT DO NOTHING`, batch.flat());
  }
}

/**
 * `asset_tags` indexes the record's tags (already unique in JavaScript), and `asset_tag_names`
 * remembers that the owner used them. A record written before the routes refused text the
 * database cannot keep whole may hold a tag the database stored folded onto another (SQLite cut
 * `".\u0000"` to `"."`; `pg` sent `"\ud800"` as U+FFFD): the second row of the same tag is the
 * same index entry, not a failure (hence ON CONFLICT DO NOTHING).
 */
export async function insertTags(tx: SqlExecutor, id: string, owner: string, tags: string[]): Promise<void> {
  await insertRows(tx, "asset_tags", ["ref_id", "owner", "tag"], tags.map((tag) => [id, owner, tag]));
  await insertRows(tx, "asset_tag_names", ["owner", "tag"], tags.map((tag) => [owner, tag]));
}

export async function insertMetadata(tx: SqlExecutor, id: string, owner: string, metadata: Record<string, unknown>): Promise<void> {
  await insertRows(tx, "asset_meta", ["ref_id", "owner", "entry"], metadataEntries(metadata).map((entry) => [id, owner, entry]));
}
