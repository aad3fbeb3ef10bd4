import { randomUUID } from "node:crypto";
import { MAX_TAGS_PER_ASSET, type AssetSort } from "@app/contracts";
import { uniqueTags, type AssetReference, type NewReference, type ReferencePatch } from "../../domain/asset-reference.ts";
import { TooManyTagsError, type ReferenceFilter, type ReferencePage, type ReferenceQuery, type ReferenceStore, type TagCountQuery } from "./reference-store.ts";
import { distinct, type SqlDriver, type SqlExecutor } from "./sql-driver.ts";
import { insertMetadata, insertTags } from "./sql-index-rows.ts";
import { migrateSchema } from "./sql-schema.ts";

const COLUMN: Record<AssetSort, string> = {
  created_at: "r.created_at",
  updated_at: "r.updated_at",
  name: "r.name",
  size: "r.size",
  last_access_time: "r.last_access_time",
};

/** The (owner, key, id) index of each sort key (sql-schema.ts). */
const SORT_INDEX: Record<AssetSort, string> = {
  created_at: "asset_refs_owner_created",
  updated_at: "asset_refs_owner_updated",
  name: "asset_refs_owner_name",
  size: "asset_refs_owner_size",
  last_access_time: "asset_refs_owner_access",
};

/**
 * From this many matches on, a page walks the sort index and keeps the matching rows (about
 * owner's records / matches rows read a page row, each a hash probe of an index entry), rather
 * than reading every match's row to sort them (a random row read each).
 */
export const WALK_FROM_MATCHES = 2_000;

export interface SqlStoreOptions {
  /** WALK_FROM_MATCHES unless set (tests set 1 to page every filtered list by walking). */
  walkFromMatches?: number;
}

/**
 * Asset records in four tables: `asset_refs` (one row a record; tags kept in order as JSON),
 * `asset_tags` (one row per record and tag, for filters and counts), `asset_tag_names` (every
 * tag an owner has used, for `include_zero`) and `asset_meta` (the user_metadata index of
 * domain/metadata-index.ts). Every row carries its owner, and every query names one: a key
 * reaches only its owner's records. Timestamps are ISO 8601 text in UTC with milliseconds, so
 * they sort as text and round-trip through a cursor exactly; names compare byte-wise in both databases.
 */
export class SqlReferenceStore implements ReferenceStore {
  private readonly walkFromMatches: number;

  constructor(
    private readonly db: SqlDriver,
    options: SqlStoreOptions = {},
  ) {
    this.walkFromMatches = options.walkFromMatches ?? WALK_FROM_MATCHES;
  }

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

  async touch(id: string, owner: string): Promise<AssetReference | null> {
    const rows = await this.db.all("UPDATE asset_refs SET last_access_time = ? WHERE id = ? AND owner = ? RETURNING *", [new Date().toISOString(), id, owner]);
    return rows.length > 0 ? toReference(rows[0]!) : null;
  }


  /**
   * A filter as conditions over `asset_refs r`: `ids`, the ids the required tags and values
   * select (an INTERSECT of ranges of the (owner, tag) and (owner, entry) indexes, null when the
   * filter requires none), and `where`, the rest (the owner, tags_none, the name, a metadata key
   * that may also be missing). The records a filter matches are its `ids` that meet `where`.
   */
  private conditions(filter: ReferenceFilter): { ids: { sql: string; params: unknown[] } | null; where: string[]; params: unknown[]; idOnly: boolean } {
    const where = ["r.owner = ?"];
    const params: unknown[] = [filter.owner];
    const sets: string[] = [];
    const setParams: unknown[] = [];
    const list = (values: string[]) => values.map(() => "?").join(", ");
    // One set per `tags_all` tag: at most MAX_FILTER_TAGS (the routes refuse more).
    for (const tag of uniqueTags(filter.tagsAll)) {
      sets.push("SELECT t.ref_id AS id FROM asset_tags t WHERE t.owner = ? AND t.tag = ?");
      setParams.push(filter.owner, tag);
    }
    // A set names a record once per row it matches, and the index rows are unique per (record,
    // tag) and (record, entry): only a set of several tags or values can name one twice, and only
    // such a set pays for DISTINCT (a quarter of the intersection's time on PostgreSQL otherwise).
    const once = (set: string, values: unknown[]) => (new Set(values).size > 1 ? distinct(set) : set);
    const any = uniqueTags(filter.tagsAny);
    if (any.length > 0) {
      sets.push(once(`SELECT t.ref_id AS id FROM asset_tags t WHERE t.owner = ? AND t.tag IN (${list(any)})`, any));
      setParams.push(filter.owner, ...any);
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
      const values = "SELECT m.ref_id AS id FROM asset_meta m WHERE m.owner = ? AND m.entry IN";
      if (!condition.orMissing) {
        // No values (an empty list) matches nothing: an empty set.
        sets.push(condition.anyOf.length > 0 ? once(`${values} (${list(condition.anyOf)})`, condition.anyOf) : "SELECT r.id FROM asset_refs r WHERE 1 = 0");
        if (condition.anyOf.length > 0) setParams.push(filter.owner, ...condition.anyOf);
        continue;
      }
      const terms = ["NOT EXISTS (SELECT 1 FROM asset_meta m WHERE m.ref_id = r.id AND m.entry = ?)"];
      const termParams: unknown[] = [condition.orMissing];
      if (condition.anyOf.length > 0) {
        terms.unshift(`r.id IN (${values} (${list(condition.anyOf)}))`);
        termParams.unshift(filter.owner, ...condition.anyOf);
      }
      where.push(`(${terms.join(" OR ")})`);
      params.push(...termParams);
    }
    // Every condition but the owner's and the name's reads no column of the record but its id.
    const idOnly = !filter.nameContains;
    if (sets.length === 0) return { ids: null, where, params, idOnly };
    return { ids: { sql: this.db.intersection(sets), params: setParams }, where, params, idOnly };
  }

  /** The WHERE conditions of a filter over `asset_refs r`, with its ids looked up one by one. */
  private where(filter: ReferenceFilter): { where: string[]; params: unknown[] } {
    const { ids, where, params } = this.conditions(filter);
    if (!ids) return { where, params };
    return { where: [this.db.memberByLookup("r.id", ids.sql), ...where], params: [...ids.params, ...params] };
  }

  /**
   * The total is counted from the index ranges alone when the filter requires tags or values and
   * its other conditions need no column but the id: the intersection of the ranges, each row of
   * `asset_refs` untouched (every index row carries its record's owner, so the owner holds). The
   * page then reads the sort index in order and keeps the matches when they are many (the first
   * page of newest records among 10,000 of 1,000,000 reads about 2,000 index entries), or reads
   * the few matches' rows and sorts them.
   */
  async list(query: ReferenceQuery): Promise<ReferencePage> {
    const { ids, where, params, idOnly } = this.conditions(query);
    // where[0] and params[0] are the owner's condition, which the index rows hold already.
    if (ids && idOnly && this.db.sharesMatches) return this.listFromSharedMatches(query, ids, where.slice(1), params.slice(1));
    const all = this.where(query);
    const totalRows =
      ids && idOnly
        ? await this.db.all(`SELECT count(*) AS n FROM (${ids.sql}) r WHERE ${["1 = 1", ...where.slice(1)].join(" AND ")}`, [...ids.params, ...params.slice(1)])
        : await this.db.all(`SELECT count(*) AS n FROM asset_refs r WHERE ${all.where.join(" AND ")}`, all.params);
    const total = Number(totalRows[0]!.n);

    const walk = ids !== null && total >= this.walkFromMatches;
    const from = walk ? this.db.walkedInOrder(SORT_INDEX[query.sort]) : "asset_refs r";
    const member = ids ? [walk ? this.db.memberRowByRow("r.id", ids.sql) : this.db.memberByLookup("r.id", ids.sql)] : [];
    const page = pageOf(query, from, [...member, ...where], [...(ids?.params ?? []), ...params]);
    const rows = await this.db.all(page.sql, page.params);
    return { items: rows.slice(0, query.limit).map(toReference), total, hasMore: rows.length > query.limit };
  }

  /**
   * The total and the page in one statement over one materialized set of the matches' ids (the
   * intersection, then `rest` of the conditions, all on the id): built once, not once for the
   * count and again for the page (on PostgreSQL that build is most of the list's time). The page
   * branch the total chooses runs (walking the sort index, or looking the few matches up); the
   * other is gated off before it reads anything.
   */
  private async listFromSharedMatches(query: ReferenceQuery, ids: { sql: string; params: unknown[] }, rest: string[], restParams: unknown[]): Promise<ReferencePage> {
    const owner = ["r.owner = ?"];
    const walk = pageOf(query, this.db.walkedInOrder(SORT_INDEX[query.sort]), ["counted.n >= ?", this.db.memberRowByRow("r.id", "SELECT id FROM matched"), ...owner], [this.walkFromMatches, query.owner]);
    const lookup = pageOf(query, "asset_refs r", ["counted.n < ?", this.db.memberByLookup("r.id", "SELECT id FROM matched WHERE counted.n < ?"), ...owner], [this.walkFromMatches, this.walkFromMatches, query.owner]);
    const dir = query.order === "asc" ? "ASC" : "DESC";
    const rows = await this.db.all(
      `WITH matched AS MATERIALIZED (SELECT r.id FROM (${ids.sql}) r WHERE ${["1 = 1", ...rest].join(" AND ")}),
        counted AS MATERIALIZED (SELECT count(*) AS n FROM matched)
       SELECT counted.n AS matched_total, p.* FROM counted LEFT JOIN LATERAL ((${walk.sql}) UNION ALL (${lookup.sql})) p ON true
       ORDER BY ${COLUMN[query.sort].replace(/^r\./, "p.")} ${dir}, p.id ${dir}`,
      [...ids.params, ...restParams, ...walk.params, ...lookup.params],
    );
    // An empty page is still one row (the LEFT JOIN's), carrying the total.
    const found = rows.filter((row) => row.id !== null);
    return { items: found.slice(0, query.limit).map(toReference), total: Number(rows[0]!.matched_total), hasMore: found.length > query.limit };
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

/** A page's SELECT over `from` (rows `r`) meeting `where`: one row past the limit (hasMore), from the cursor or the offset. */
function pageOf(query: ReferenceQuery, from: string, where: string[], params: unknown[]): { sql: string; params: unknown[] } {
  const column = COLUMN[query.sort];
  const dir = query.order === "asc" ? "ASC" : "DESC";
  const cmp = query.order === "asc" ? ">" : "<";
  const conditions = [...where];
  const values = [...params];
  if (query.after) {
    conditions.push(`(${column} ${cmp} ? OR (${column} = ? AND r.id ${cmp} ?))`);
    values.push(query.after.value, query.after.value, query.after.id);
  }
  return {
    sql: `SELECT r.* FROM ${from} WHERE ${conditions.join(" AND ")} ORDER BY ${column} ${dir}, r.id ${dir} LIMIT ? OFFSET ?`,
    params: [...values, query.limit + 1, query.after ? 0 : query.offset],
  };
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

export function toReference(row: Record<string, unknown>): AssetReference {
  return {
    id: String(row.id),
    owner: String((row.owner as string | null | undefined) ?? ""),
    hash: String(row.hash),
    name: String(row.name),
    size: Number(row.size),
    mimeType: String(row.mime_type),
    tags: JSON.parse(String(row.tags)) as string[],
    userMetadata: JSON.parse(String(row.user_metadata)) as Record<string, unknown>,
    systemMetadata: row.system_metadata === null || row.system_metadata === undefined ? null : (JSON.parse(row.system_metadata as string) as Record<string, unknown>),
    previewId: row.preview_id === null || row.preview_id === undefined ? null : (row.preview_id as string),
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
