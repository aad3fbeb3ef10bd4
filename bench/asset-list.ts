import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createReferenceStore, metadataConditions, presentEntry, valueEntry, type ReferenceStore } from "@app/upload";
import { createTestDatabase } from "@app/testkit/postgres";

/**
 * A page of GET /api/assets over 1,000,000 records of one owner (issue 19's figure), in the
 * ReferenceStore itself on both databases: the page the route asks for (20 records, newest
 * first, with the total) filtered by one tag of 100 (`tags_all`, 10,000 records) and a
 * `metadata_filter` on one of 50 values, against the same page with no filter as the baseline.
 * The records are written with SQL in bulk (through the store's own tables and index
 * entries), then the store is opened as the service opens it. ASSET_BENCH_REFS sets the count.
 */
export interface AssetListFigures {
  records: number;
  runs: number;
  fillSec: Record<string, number>;
  /** Milliseconds per page (p50, p99), by database and query. */
  sqlite: Pages;
  postgres: Pages;
  summary: string[];
}
interface Pages {
  filtered: { p50: number; p99: number; total: number };
  unfiltered: { p50: number; p99: number; total: number };
}

const OWNER = "bench";
const RUNS = 60;
const TAGS = 100;
const GROUPS = 50;

/** The bulk rows: record i has tags ["all", "t<i % 100>"] and user_metadata {"group": "g<i % 50>"}. */
export function fillStatements(records: number, dialect: "sqlite" | "postgres"): string[] {
  const groups = Array.from({ length: GROUPS }, (_, g) => `'${valueEntry("group", `g${g}`)}'`);
  const seq =
    dialect === "sqlite"
      ? `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${records})`
      : `WITH seq(i) AS (SELECT generate_series(1, ${records}))`;
  const id = dialect === "sqlite" ? "printf('%08x-0000-4000-8000-%012x', i, i)" : "lpad(to_hex(i), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0')";
  const hash = dialect === "sqlite" ? "printf('%064x', i)" : "lpad(to_hex(i), 64, '0')";
  const at =
    dialect === "sqlite"
      ? "strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i / 1000.0) || ' seconds')"
      : `to_char(timestamp '2026-01-01' + i * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const groupEntry = dialect === "sqlite" ? `json_extract('[${groups.join(",").replaceAll("'", '"')}]', '$[' || (CAST(r.size AS INTEGER) % ${GROUPS}) || ']')` : `(ARRAY[${groups.join(",")}])[(r.size % ${GROUPS}) + 1]`;
  return [
    `INSERT INTO asset_refs (id, owner, hash, name, name_folded, size, mime_type, tags, user_metadata, created_at, updated_at, last_access_time)
     ${seq} SELECT ${id}, '${OWNER}', ${hash}, 'asset ' || i, 'asset ' || i, i, 'application/octet-stream',
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

function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 100) / 100;
}

async function pages(store: ReferenceStore): Promise<Pages> {
  const page = { sort: "created_at" as const, order: "desc" as const, limit: 20, offset: 0 };
  const none = { owner: OWNER, tagsAll: [] as string[], tagsAny: [] as string[], tagsNone: [] as string[], metadata: [] };
  const measure = async (filter: typeof none) => {
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < RUNS + 3; i++) {
      const t = performance.now();
      const result = await store.list({ ...page, ...filter });
      if (i >= 3) times.push(performance.now() - t);
      total = result.total;
    }
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99), total };
  };
  return {
    filtered: await measure({ ...none, tagsAll: ["t7"], metadata: metadataConditions({ group: "g7" }) as never }),
    unfiltered: await measure(none),
  };
}

async function sqlite(records: number, fillSec: Record<string, number>): Promise<Pages> {
  const dir = mkdtempSync(join(tmpdir(), "bench-asset-list-"));
  try {
    const made = await createReferenceStore({ DATA_DIR: dir });
    await made.init();
    await made.close();
    const { Database } = createRequire(import.meta.url)("node-sqlite3-wasm") as typeof import("node-sqlite3-wasm");
    const db = new Database(join(dir, "assets.sqlite"));
    const t = performance.now();
    const statements = fillStatements(records, "sqlite");
    db.exec("BEGIN");
    for (const statement of statements.slice(0, -1)) db.exec(statement);
    db.exec("COMMIT");
    db.exec(statements.at(-1)!);
    fillSec.sqlite = Math.round((performance.now() - t) / 100) / 10;
    db.close();
    const store = await createReferenceStore({ DATA_DIR: dir });
    await store.init();
    try {
      return await pages(store);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(records: number, fillSec: Record<string, number>): Promise<Pages> {
  const db = await createTestDatabase("bench_asset_list");
  try {
    const store = await createReferenceStore({ DATA_DIR: tmpdir(), DATABASE_URL: db.url });
    await store.init();
    const t = performance.now();
    for (const statement of fillStatements(records, "postgres")) await db.run(statement);
    fillSec.postgres = Math.round((performance.now() - t) / 100) / 10;
    try {
      return await pages(store);
    } finally {
      await store.close();
    }
  } finally {
    await db.drop();
  }
}

export async function run(): Promise<AssetListFigures> {
  const records = Number(process.env.ASSET_BENCH_REFS ?? 1_000_000);
  const fillSec: Record<string, number> = {};
  const pg = await postgres(records, fillSec);
  const lite = await sqlite(records, fillSec);
  const line = (name: string, p: Pages) =>
    `asset list over ${records} records, ${name}: tag + metadata_filter page with total (${p.filtered.total}) p50 ${p.filtered.p50} ms, p99 ${p.filtered.p99} ms; unfiltered page with total p50 ${p.unfiltered.p50} ms, p99 ${p.unfiltered.p99} ms`;
  return { records, runs: RUNS, fillSec, sqlite: lite, postgres: pg, summary: [line("SQLite", lite), line("PostgreSQL", pg)] };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
