import { randomUUID } from "node:crypto";
import { MAX_TAGS_PER_ASSET, type AssetSort } from "@app/contracts";
import { metadataEntries } from "../domain/metadata-index.ts";
import {
  TooManyTagsError,
  uniqueTags,
  type AssetReference,
  type NewReference,
  type ReferenceFilter,
  type ReferencePage,
  type ReferencePatch,
  type ReferenceQuery,
  type ReferenceStore,
  type TagCountQuery,
} from "./reference-store.ts";
import { migrateSchema } from "./sql-schema.ts";

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
  /** Statements that create the tables in their current shape, run in one transaction. */
  readonly schema: string[];
  /** A query answering the column names (`name`) of the table given as its one parameter. */
  readonly columnsQuery: string;
  /** The dialect's `(haystack, needle)` substring position: 1-based, 0 when absent. */
  readonly positionFunction: "instr" | "strpos";
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const COLUMN: Record<AssetSort, string> = {
  created_at: "r.created_at",
  updated_at: "r.updated_at",
  name: "r.name",
  size: "r.size",
  last_access_time: "r.last_access_time",
};

/** Rows a multi-row INSERT carries (well under both databases' parameter limits). */
const INSERT_BATCH = 200;

/**
 * Asset records in four tables: `asset_refs` (one row a record; tags kept in order as JSON),
 * `asset_tags` (one row per record and tag, for filters and counts), `asset_tag_names` (every
 * tag an owner has used, for `include_zero`) and `asset_meta` (the user_metadata index of
 * domain/metadata-index.ts). Every row carries its owner, and every query names one: a key
 * reaches only its owner's records. Timestamps are ISO 8601 text in UTC with milliseconds, so
 * they sort as text and round-trip through a cursor exactly; names compare byte-wise in both databases.
 */
export class SqlReferenceStore implements ReferenceStore {
  constructor(private readonly db: SqlDriver) {}

  get kind(): "sqlite" | "postgres" {
    return this.db.kind;
  }

  async init(): Promise<void> {
    await this.db.transaction((tx) => migrateSchema(tx, this.db));
  }

  async create(input: NewReference): Promise<{ reference: AssetReference; created: boolean }> {
    const now = new Date().toISOString();
    const id = randomUUID();
    const tags = limitedTags(input.tags);
    const userMetadata = input.userMetadata ?? {};
    return this.db.transaction(async (tx) => {
      const inserted = await tx.run(
        `INSERT INTO asset_refs (id, owner, hash, name, name_folded, size, mime_type, tags, user_metadata, system_metadata, preview_id, origin, created_at, updated_at, last_access_time)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (owner, hash, origin) WHERE origin IS NOT NULL DO NOTHING`,
        [
          id,
          input.owner,
          input.hash,
          input.name,
          fold(input.name),
          input.size,
          input.mimeType,
          JSON.stringify(tags),
          JSON.stringify(userMetadata),
          input.systemMetadata ? JSON.stringify(input.systemMetadata) : null,
          input.previewId ?? null,
          input.origin ?? null,
          now,
          now,
          now,
        ],
      );
      if (inserted === 0) {
        const rows = await tx.all("SELECT * FROM asset_refs WHERE owner = ? AND hash = ? AND origin = ?", [input.owner, input.hash, input.origin]);
        return { reference: toReference(rows[0]!), created: false };
      }
      await insertTags(tx, id, input.owner, tags);
      await insertMetadata(tx, id, input.owner, userMetadata);
      return { reference: (await getIn(tx, id, input.owner))!, created: true };
    });
  }

  async get(id: string, owner: string): Promise<AssetReference | null> {
    return getIn(this.db, id, owner);
  }

  async update(id: string, owner: string, patch: ReferencePatch): Promise<AssetReference | null> {
    return this.db.transaction(async (tx) => {
      const current = await getIn(tx, id, owner);
      if (!current) return null;
      const name = patch.name ?? current.name;
      const tags = patch.tags ? limitedTags(patch.tags) : current.tags;
      const userMetadata = patch.userMetadata ?? current.userMetadata;
      const systemMetadata = patch.systemMetadata === undefined ? current.systemMetadata : patch.systemMetadata;
      const previewId = patch.previewId === undefined ? current.previewId : patch.previewId;
      await tx.run(
        "UPDATE asset_refs SET name = ?, name_folded = ?, tags = ?, user_metadata = ?, system_metadata = ?, preview_id = ?, updated_at = ? WHERE id = ?",
        [
          name,
          fold(name),
          JSON.stringify(tags),
          JSON.stringify(userMetadata),
          systemMetadata ? JSON.stringify(systemMetadata) : null,
          previewId,
          laterThan(current.updatedAt),
          id,
        ],
      );
      if (patch.tags) {
        await tx.run("DELETE FROM asset_tags WHERE ref_id = ?", [id]);
        await insertTags(tx, id, owner, tags);
      }
      if (patch.userMetadata) {
        await tx.run("DELETE FROM asset_meta WHERE ref_id = ?", [id]);
        await insertMetadata(tx, id, owner, userMetadata);
      }
      return getIn(tx, id, owner);
    });
  }

  async addTags(id: string, owner: string, tags: string[]): Promise<{ reference: AssetReference; added: string[]; alreadyPresent: string[] } | null> {
    return this.db.transaction(async (tx) => {
      const current = await getIn(tx, id, owner);
      if (!current) return null;
      const wanted = uniqueTags(tags);
      const added = wanted.filter((t) => !current.tags.includes(t));
      const alreadyPresent = wanted.filter((t) => current.tags.includes(t));
      if (added.length > 0) await this.writeTags(tx, current, limitedTags([...current.tags, ...added]));
      return { reference: (await getIn(tx, id, owner))!, added, alreadyPresent };
    });
  }

  async removeTags(id: string, owner: string, tags: string[]): Promise<{ reference: AssetReference; removed: string[]; notPresent: string[] } | null> {
    return this.db.transaction(async (tx) => {
      const current = await getIn(tx, id, owner);
      if (!current) return null;
      const wanted = uniqueTags(tags);
      const removed = wanted.filter((t) => current.tags.includes(t));
      const notPresent = wanted.filter((t) => !current.tags.includes(t));
      if (removed.length > 0) await this.writeTags(tx, current, current.tags.filter((t) => !removed.includes(t)));
      return { reference: (await getIn(tx, id, owner))!, removed, notPresent };
    });
  }

  private async writeTags(tx: SqlExecutor, current: AssetReference, tags: string[]): Promise<void> {
    await tx.run("UPDATE asset_refs SET tags = ?, updated_at = ? WHERE id = ?", [JSON.stringify(tags), laterThan(current.updatedAt), current.id]);
    await tx.run("DELETE FROM asset_tags WHERE ref_id = ?", [current.id]);
    await insertTags(tx, current.id, current.owner, tags);
  }

  async delete(id: string, owner: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const gone = await tx.run("DELETE FROM asset_refs WHERE id = ? AND owner = ?", [id, owner]);
      if (gone === 0) return false;
      await tx.run("DELETE FROM asset_tags WHERE ref_id = ?", [id]);
      await tx.run("DELETE FROM asset_meta WHERE ref_id = ?", [id]);
      return true;
    });
  }

  async touch(id: string, owner: string): Promise<void> {
    await this.db.run("UPDATE asset_refs SET last_access_time = ? WHERE id = ? AND owner = ?", [new Date().toISOString(), id, owner]);
  }

  async countByHash(hash: string): Promise<number> {
    const rows = await this.db.all("SELECT count(*) AS n FROM asset_refs WHERE hash = ?", [hash]);
    return Number(rows[0]!.n);
  }

  /** The WHERE conditions of a filter, over `asset_refs r`. */
  private where(filter: ReferenceFilter): { where: string[]; params: unknown[] } {
    const where = ["r.owner = ?"];
    const params: unknown[] = [filter.owner];
    const list = (values: string[]) => values.map(() => "?").join(", ");
    // Required tags and values are sets of ids read from the (owner, tag) and (owner, entry)
    // indexes, so a filtered page and its total start from the few matching records rather than
    // testing every record of the owner. One set per `tags_all` tag: at most MAX_FILTER_TAGS (the
    // routes refuse more), far inside SQLite's expression depth of 1000.
    for (const tag of uniqueTags(filter.tagsAll)) {
      where.push("r.id IN (SELECT t.ref_id FROM asset_tags t WHERE t.owner = ? AND t.tag = ?)");
      params.push(filter.owner, tag);
    }
    const any = uniqueTags(filter.tagsAny);
    if (any.length > 0) {
      where.push(`r.id IN (SELECT t.ref_id FROM asset_tags t WHERE t.owner = ? AND t.tag IN (${list(any)}))`);
      params.push(filter.owner, ...any);
    }
    const none = uniqueTags(filter.tagsNone);
    if (none.length > 0) {
      where.push(`NOT EXISTS (SELECT 1 FROM asset_tags t WHERE t.ref_id = r.id AND t.tag IN (${list(none)}))`);
      params.push(...none);
    }
    if (filter.nameContains) {
      where.push(`${this.db.positionFunction}(r.name_folded, ?) > 0`);
      params.push(fold(filter.nameContains));
    }
    for (const condition of filter.metadata) {
      const terms: string[] = [];
      if (condition.anyOf.length > 0) {
        terms.push(`r.id IN (SELECT m.ref_id FROM asset_meta m WHERE m.owner = ? AND m.entry IN (${list(condition.anyOf)}))`);
        params.push(filter.owner, ...condition.anyOf);
      }
      if (condition.orMissing) {
        terms.push("NOT EXISTS (SELECT 1 FROM asset_meta m WHERE m.ref_id = r.id AND m.entry = ?)");
        params.push(condition.orMissing);
      }
      where.push(terms.length > 0 ? `(${terms.join(" OR ")})` : "1 = 0");
    }
    return { where, params };
  }

  async list(query: ReferenceQuery): Promise<ReferencePage> {
    const { where, params } = this.where(query);
    const totalRows = await this.db.all(`SELECT count(*) AS n FROM asset_refs r WHERE ${where.join(" AND ")}`, params);

    const column = COLUMN[query.sort];
    const dir = query.order === "asc" ? "ASC" : "DESC";
    const cmp = query.order === "asc" ? ">" : "<";
    const pageWhere = [...where];
    const pageParams = [...params];
    if (query.after) {
      pageWhere.push(`(${column} ${cmp} ? OR (${column} = ? AND r.id ${cmp} ?))`);
      pageParams.push(query.after.value, query.after.value, query.after.id);
    }
    const rows = await this.db.all(`SELECT r.* FROM asset_refs r WHERE ${pageWhere.join(" AND ")} ORDER BY ${column} ${dir}, r.id ${dir} LIMIT ? OFFSET ?`, [
      ...pageParams,
      query.limit + 1,
      query.after ? 0 : query.offset,
    ]);
    return { items: rows.slice(0, query.limit).map(toReference), total: Number(totalRows[0]!.n), hasMore: rows.length > query.limit };
  }

  async tagCounts(query: TagCountQuery): Promise<{ tags: { name: string; count: number }[]; total: number }> {
    const conditions = ["n.owner = ?"];
    const params: unknown[] = [query.owner];
    if (query.prefix) {
      conditions.push("substr(n.tag, 1, ?) = ?");
      params.push([...query.prefix].length, query.prefix);
    }
    // Every tag in asset_tags is also in asset_tag_names (insertTags writes both), so counting from the names misses none.
    const counted = `SELECT n.tag AS tag, count(t.ref_id) AS n FROM asset_tag_names n LEFT JOIN asset_tags t ON t.owner = n.owner AND t.tag = n.tag
      WHERE ${conditions.join(" AND ")} GROUP BY n.tag ${query.includeZero ? "" : "HAVING count(t.ref_id) > 0"}`;
    const order = query.order === "count_desc" ? "n DESC, tag ASC" : "tag ASC";
    const rows = await this.db.all(`SELECT tag, n FROM (${counted}) c ORDER BY ${order} LIMIT ? OFFSET ?`, [...params, query.limit, query.offset]);
    const total = await this.db.all(`SELECT count(*) AS n FROM (${counted}) c`, params);
    return { tags: rows.map((r) => ({ name: String(r.tag), count: Number(r.n) })), total: Number(total[0]!.n) };
  }

  async tagHistogram(filter: ReferenceFilter, limit: number): Promise<{ name: string; count: number }[]> {
    const { where, params } = this.where(filter);
    const rows = await this.db.all(
      `SELECT t.tag AS tag, count(*) AS n FROM asset_tags t JOIN asset_refs r ON r.id = t.ref_id WHERE ${where.join(" AND ")}
       GROUP BY t.tag ORDER BY n DESC, t.tag ASC LIMIT ?`,
      [...params, limit],
    );
    return rows.map((r) => ({ name: String(r.tag), count: Number(r.n) }));
  }

  async adoptUnowned(owner: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const moved = await tx.run("UPDATE asset_refs SET owner = ? WHERE owner = ''", [owner]);
      for (const table of ["asset_tags", "asset_meta"]) await tx.run(`UPDATE ${table} SET owner = ? WHERE owner = ''`, [owner]);
      await tx.run("INSERT INTO asset_tag_names (owner, tag) SELECT DISTINCT ?, tag FROM asset_tag_names WHERE owner = '' ON CONFLICT DO NOTHING", [owner]);
      await tx.run("DELETE FROM asset_tag_names WHERE owner = ''");
      return moved;
    });
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

async function getIn(db: SqlExecutor, id: string, owner: string): Promise<AssetReference | null> {
  const rows = await db.all("SELECT * FROM asset_refs WHERE id = ? AND owner = ?", [id, owner]);
  return rows.length > 0 ? toReference(rows[0]!) : null;
}

/** The one tag limit, held by every write that sets a record's tags (create, PUT, POST …/tags). */
function limitedTags(tags: string[]): string[] {
  const unique = uniqueTags(tags);
  if (unique.length > MAX_TAGS_PER_ASSET) throw new TooManyTagsError(`a record carries at most ${MAX_TAGS_PER_ASSET} tags (this would make ${unique.length})`);
  return unique;
}

/** Rows of one table, several a statement. */
export async function insertRows(tx: SqlExecutor, table: string, columns: string[], rows: unknown[][]): Promise<void> {
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
async function insertTags(tx: SqlExecutor, id: string, owner: string, tags: string[]): Promise<void> {
  await insertRows(tx, "asset_tags", ["ref_id", "owner", "tag"], tags.map((tag) => [id, owner, tag]));
  await insertRows(tx, "asset_tag_names", ["owner", "tag"], tags.map((tag) => [owner, tag]));
}

export async function insertMetadata(tx: SqlExecutor, id: string, owner: string, metadata: Record<string, unknown>): Promise<void> {
  await insertRows(tx, "asset_meta", ["ref_id", "owner", "entry"], metadataEntries(metadata).map((entry) => [id, owner, entry]));
}

export function toReference(row: Record<string, unknown>): AssetReference {
  return {
    id: String(row.id),
    owner: String(row.owner ?? ""),
    hash: String(row.hash),
    name: String(row.name),
    size: Number(row.size),
    mimeType: String(row.mime_type),
    tags: JSON.parse(String(row.tags)) as string[],
    userMetadata: JSON.parse(String(row.user_metadata)) as Record<string, unknown>,
    systemMetadata: row.system_metadata === null || row.system_metadata === undefined ? null : (JSON.parse(String(row.system_metadata)) as Record<string, unknown>),
    previewId: row.preview_id === null || row.preview_id === undefined ? null : String(row.preview_id),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    lastAccessTime: String(row.last_access_time ?? row.created_at),
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
