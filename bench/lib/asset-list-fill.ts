import { createRequire } from "node:module";
import { join } from "node:path";
import { createReferenceStore, presentEntry, valueEntry } from "@app/upload/internal";

const TAGS = 100;
const GROUPS = 50;

/** The bulk rows: record i has tags ["all", "t<i % 100>"] and user_metadata {"group": "g<i % 50>"}. */
export function fillStatements(records: number, dialect: "sqlite" | "postgres", owner: string): string[] {
  const groups = Array.from({ length: GROUPS }, (_, g) => `'${valueEntry("group", `g${g}`)}'`);
  const seq =
    dialect === "sqlite"
      ? `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${records})`
      : `WITH seq(i) AS (SELECT generate_series(1, ${records}))`;
  const id =
    dialect === "sqlite"
      ? "printf('%08x-0000-4000-8000-%012x', i, i)"
      : "lpad(to_hex(i), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0')";
  const hash = dialect === "sqlite" ? "printf('%064x', i)" : "lpad(to_hex(i), 64, '0')";
  const at =
    dialect === "sqlite"
      ? "strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i / 1000.0) || ' seconds')"
      : `to_char(timestamp '2026-01-01' + i * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const groupEntry =
    dialect === "sqlite"
      ? `json_extract('[${groups.join(",").replaceAll("'", '"')}]', '$[' || (CAST(r.size AS INTEGER) % ${GROUPS}) || ']')`
      : `(ARRAY[${groups.join(",")}])[(r.size % ${GROUPS}) + 1]`;
  return [
    `INSERT INTO asset_refs (id, owner, hash, name, name_folded, size, mime_type, tags, user_metadata, created_at, updated_at, last_access_time)
     ${seq} SELECT ${id}, '${owner}', ${hash}, 'asset ' || i, 'asset ' || i, i, 'application/octet-stream',
       '["all","t' || (i % ${TAGS}) || '"]', '{"group":"g' || (i % ${GROUPS}) || '"}', ${at}, ${at}, ${at} FROM seq`,
    `INSERT INTO asset_tags (ref_id, owner, tag) SELECT id, owner, 'all' FROM asset_refs`,
    `INSERT INTO asset_tags (ref_id, owner, tag) SELECT id, owner, 't' || (size % ${TAGS}) FROM asset_refs`,
    `INSERT INTO asset_tag_names (owner, tag) SELECT DISTINCT owner, tag FROM asset_tags`,
    `INSERT INTO asset_meta (ref_id, owner, entry) SELECT id, owner, '${presentEntry("group")}' FROM asset_refs`,
    `INSERT INTO asset_meta (ref_id, owner, entry) SELECT r.id, r.owner, ${groupEntry} FROM asset_refs r`,
    // What autovacuum does to a table after a bulk load (statistics, and the visibility map that index-only scans need).
    dialect === "sqlite" ? "ANALYZE" : "VACUUM ANALYZE",
  ];
}

/** A DATA_DIR's record store (`assets.sqlite`) made as the service makes it, then filled in bulk; resolves with the seconds the fill took. */
export async function fillSqliteStore(dataDir: string, records: number, owner: string): Promise<number> {
  const made = await createReferenceStore({ DATA_DIR: dataDir });
  await made.init();
  await made.close();
  const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
  const db = new Database(join(dataDir, "assets.sqlite"));
  const t = performance.now();
  const statements = fillStatements(records, "sqlite", owner);
  db.exec("BEGIN");
  for (const statement of statements.slice(0, -1)) db.exec(statement);
  db.exec("COMMIT");
  db.exec(statements.at(-1)!);
  db.close();
  return Math.round((performance.now() - t) / 100) / 10;
}
