import { randomUUID } from "node:crypto";
import type { AssetSort } from "@app/contracts";
import {
  uniqueTags,
  type AssetReference,
  type NewReference,
  type ReferencePage,
  type ReferencePatch,
  type ReferenceQuery,
  type ReferenceStore,
  type TagCountQuery,
} from "./reference-store.ts";

/**
 * How the SQL store reaches its database. Statements use `?` placeholders (the Postgres driver
 * numbers them), so both implementations run the very same queries below; only the table
 * definitions, the driver and the lock differ.
 */
export interface SqlExecutor {
  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Rows changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
}

export interface SqlDriver extends SqlExecutor {
  readonly kind: "sqlite" | "postgres";
  /** Statements that create the tables, run in one transaction. */
  readonly schema: string[];
  /** The dialect's `(haystack, needle)` substring position: 1-based, 0 when absent. */
  readonly positionFunction: "instr" | "strpos";
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Index statements shared by both dialects. */
export const SHARED_INDEXES = [
  "CREATE UNIQUE INDEX IF NOT EXISTS asset_refs_origin ON asset_refs (hash, origin) WHERE origin IS NOT NULL",
  "CREATE INDEX IF NOT EXISTS asset_refs_hash ON asset_refs (hash)",
  "CREATE INDEX IF NOT EXISTS asset_refs_created ON asset_refs (created_at, id)",
  "CREATE INDEX IF NOT EXISTS asset_refs_updated ON asset_refs (updated_at, id)",
  "CREATE INDEX IF NOT EXISTS asset_refs_name ON asset_refs (name, id)",
  "CREATE INDEX IF NOT EXISTS asset_refs_size ON asset_refs (size, id)",
  "CREATE INDEX IF NOT EXISTS asset_tags_tag ON asset_tags (tag, ref_id)",
];

const COLUMN: Record<AssetSort, string> = { created_at: "r.created_at", updated_at: "r.updated_at", name: "r.name", size: "r.size" };

/**
 * Asset records in two tables: `asset_refs` (one row a record; tags kept in order as JSON) and
 * `asset_tags` (one row per record and tag, indexed, for filters and counts). Timestamps are
 * ISO 8601 text in UTC with milliseconds, so they sort as text and round-trip through a cursor
 * exactly; names compare byte-wise in both databases.
 */
export class SqlReferenceStore implements ReferenceStore {
  constructor(private readonly db: SqlDriver) {}

  get kind(): "sqlite" | "postgres" {
    return this.db.kind;
  }

  async init(): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const statement of this.db.schema) await tx.run(statement);
    });
  }

  async create(input: NewReference): Promise<{ reference: AssetReference; created: boolean }> {
    const now = new Date().toISOString();
    const id = randomUUID();
    const tags = uniqueTags(input.tags);
    return this.db.transaction(async (tx) => {
      const inserted = await tx.run(
        `INSERT INTO asset_refs (id, hash, name, name_folded, size, mime_type, tags, user_metadata, system_metadata, origin, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (hash, origin) WHERE origin IS NOT NULL DO NOTHING`,
        [
          id,
          input.hash,
          input.name,
          fold(input.name),
          input.size,
          input.mimeType,
          JSON.stringify(tags),
          JSON.stringify(input.userMetadata ?? {}),
          input.systemMetadata ? JSON.stringify(input.systemMetadata) : null,
          input.origin ?? null,
          now,
          now,
        ],
      );
      if (inserted === 0) {
        const rows = await tx.all("SELECT * FROM asset_refs WHERE hash = ? AND origin = ?", [input.hash, input.origin]);
        return { reference: toReference(rows[0]!), created: false };
      }
      await insertTags(tx, id, tags);
      return { reference: (await getIn(tx, id))!, created: true };
    });
  }

  async get(id: string): Promise<AssetReference | null> {
    return getIn(this.db, id);
  }

  async update(id: string, patch: ReferencePatch): Promise<AssetReference | null> {
    return this.db.transaction(async (tx) => {
      const current = await getIn(tx, id);
      if (!current) return null;
      const name = patch.name ?? current.name;
      const tags = patch.tags ? uniqueTags(patch.tags) : current.tags;
      const userMetadata = patch.userMetadata ?? current.userMetadata;
      const systemMetadata = patch.systemMetadata === undefined ? current.systemMetadata : patch.systemMetadata;
      await tx.run(
        "UPDATE asset_refs SET name = ?, name_folded = ?, tags = ?, user_metadata = ?, system_metadata = ?, updated_at = ? WHERE id = ?",
        [name, fold(name), JSON.stringify(tags), JSON.stringify(userMetadata), systemMetadata ? JSON.stringify(systemMetadata) : null, laterThan(current.updatedAt), id],
      );
      if (patch.tags) {
        await tx.run("DELETE FROM asset_tags WHERE ref_id = ?", [id]);
        await insertTags(tx, id, tags);
      }
      return getIn(tx, id);
    });
  }

  async addTags(id: string, tags: string[]): Promise<{ reference: AssetReference; added: string[]; alreadyPresent: string[] } | null> {
    return this.db.transaction(async (tx) => {
      const current = await getIn(tx, id);
      if (!current) return null;
      const wanted = uniqueTags(tags);
      const added = wanted.filter((t) => !current.tags.includes(t));
      const alreadyPresent = wanted.filter((t) => current.tags.includes(t));
      if (added.length > 0) await this.writeTags(tx, current, [...current.tags, ...added]);
      return { reference: (await getIn(tx, id))!, added, alreadyPresent };
    });
  }

  async removeTags(id: string, tags: string[]): Promise<{ reference: AssetReference; removed: string[]; notPresent: string[] } | null> {
    return this.db.transaction(async (tx) => {
      const current = await getIn(tx, id);
      if (!current) return null;
      const wanted = uniqueTags(tags);
      const removed = wanted.filter((t) => current.tags.includes(t));
      const notPresent = wanted.filter((t) => !current.tags.includes(t));
      if (removed.length > 0) await this.writeTags(tx, current, current.tags.filter((t) => !removed.includes(t)));
      return { reference: (await getIn(tx, id))!, removed, notPresent };
    });
  }

  private async writeTags(tx: SqlExecutor, current: AssetReference, tags: string[]): Promise<void> {
    await tx.run("UPDATE asset_refs SET tags = ?, updated_at = ? WHERE id = ?", [JSON.stringify(tags), laterThan(current.updatedAt), current.id]);
    await tx.run("DELETE FROM asset_tags WHERE ref_id = ?", [current.id]);
    await insertTags(tx, current.id, tags);
  }

  async delete(id: string): Promise<{ hash: string; remaining: number } | null> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.all("SELECT hash FROM asset_refs WHERE id = ?", [id]);
      if (rows.length === 0) return null;
      const hash = String(rows[0]!.hash);
      await tx.run("DELETE FROM asset_tags WHERE ref_id = ?", [id]);
      await tx.run("DELETE FROM asset_refs WHERE id = ?", [id]);
      return { hash, remaining: await countIn(tx, hash) };
    });
  }

  async countByHash(hash: string): Promise<number> {
    return countIn(this.db, hash);
  }

  async list(query: ReferenceQuery): Promise<ReferencePage> {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const tag of uniqueTags(query.includeTags)) {
      where.push("EXISTS (SELECT 1 FROM asset_tags t WHERE t.ref_id = r.id AND t.tag = ?)");
      params.push(tag);
    }
    const excluded = uniqueTags(query.excludeTags);
    if (excluded.length > 0) {
      where.push(`NOT EXISTS (SELECT 1 FROM asset_tags t WHERE t.ref_id = r.id AND t.tag IN (${excluded.map(() => "?").join(", ")}))`);
      params.push(...excluded);
    }
    if (query.nameContains) {
      where.push(`${this.db.positionFunction}(r.name_folded, ?) > 0`);
      params.push(fold(query.nameContains));
    }
    const filter = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    const totalRows = await this.db.all(`SELECT count(*) AS n FROM asset_refs r ${filter}`, params);

    const column = COLUMN[query.sort];
    const dir = query.order === "asc" ? "ASC" : "DESC";
    const cmp = query.order === "asc" ? ">" : "<";
    const pageWhere = [...where];
    const pageParams = [...params];
    if (query.after) {
      pageWhere.push(`(${column} ${cmp} ? OR (${column} = ? AND r.id ${cmp} ?))`);
      pageParams.push(query.after.value, query.after.value, query.after.id);
    }
    const pageFilter = pageWhere.length > 0 ? `WHERE ${pageWhere.join(" AND ")}` : "";
    const rows = await this.db.all(`SELECT r.* FROM asset_refs r ${pageFilter} ORDER BY ${column} ${dir}, r.id ${dir} LIMIT ? OFFSET ?`, [
      ...pageParams,
      query.limit + 1,
      query.offset,
    ]);
    return { items: rows.slice(0, query.limit).map(toReference), total: Number(totalRows[0]!.n), hasMore: rows.length > query.limit };
  }

  async tagCounts(query: TagCountQuery): Promise<{ tags: { name: string; count: number }[]; total: number }> {
    const filter = query.prefix ? "WHERE substr(tag, 1, ?) = ?" : "";
    const params = query.prefix ? [[...query.prefix].length, query.prefix] : [];
    const order = query.order === "count_desc" ? "n DESC, tag ASC" : "tag ASC";
    const rows = await this.db.all(`SELECT tag, count(*) AS n FROM asset_tags ${filter} GROUP BY tag ORDER BY ${order} LIMIT ? OFFSET ?`, [
      ...params,
      query.limit,
      query.offset,
    ]);
    const total = await this.db.all(`SELECT count(DISTINCT tag) AS n FROM asset_tags ${filter}`, params);
    return { tags: rows.map((r) => ({ name: String(r.tag), count: Number(r.n) })), total: Number(total[0]!.n) };
  }

  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T> {
    return this.db.withHashLock(hash, fn);
  }

  async ping(): Promise<boolean> {
    try {
      await this.db.all("SELECT 1 AS one");
      return true;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

async function getIn(db: SqlExecutor, id: string): Promise<AssetReference | null> {
  const rows = await db.all("SELECT * FROM asset_refs WHERE id = ?", [id]);
  return rows.length > 0 ? toReference(rows[0]!) : null;
}

async function countIn(db: SqlExecutor, hash: string): Promise<number> {
  const rows = await db.all("SELECT count(*) AS n FROM asset_refs WHERE hash = ?", [hash]);
  return Number(rows[0]!.n);
}

/**
 * `asset_tags` indexes the record's tags (already unique in JavaScript). A record written before
 * the routes refused text the database cannot keep whole may hold a tag the database stored
 * folded onto another (SQLite cut `".\u0000"` to `"."`; `pg` sent `"\ud800"` as U+FFFD): the
 * second row of the same tag is the same index entry, not a failure.
 */
async function insertTags(tx: SqlExecutor, id: string, tags: string[]): Promise<void> {
  for (const tag of tags) await tx.run("INSERT INTO asset_tags (ref_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING", [id, tag]);
}

function toReference(row: Record<string, unknown>): AssetReference {
  return {
    id: String(row.id),
    hash: String(row.hash),
    name: String(row.name),
    size: Number(row.size),
    mimeType: String(row.mime_type),
    tags: JSON.parse(String(row.tags)) as string[],
    userMetadata: JSON.parse(String(row.user_metadata)) as Record<string, unknown>,
    systemMetadata: row.system_metadata === null || row.system_metadata === undefined ? null : (JSON.parse(String(row.system_metadata)) as Record<string, unknown>),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}

/** Case-insensitive name search compares these (the same folding in both databases). */
function fold(name: string): string {
  return name.toLowerCase();
}

/** Now, but never earlier than or equal to the previous value: an update always moves updated_at. */
function laterThan(previous: string): string {
  const now = Date.now();
  const prev = Date.parse(previous);
  return new Date(Math.max(now, prev + 1)).toISOString();
}
