import { randomUUID } from "node:crypto";
import { sql, type RawBuilder } from "kysely";
import { MAX_TAGS_PER_ASSET, type AssetSort } from "@app/contracts";
import type { Database } from "@app/sql";
import { uniqueTags, type AssetReference, type NewReference, type ReferencePatch } from "../../domain/asset-reference.ts";
import type { AssetDb, AssetRefRow, AssetTables } from "./asset-tables.ts";
import { ASSET_MIGRATIONS } from "./migrations/index.ts";
import {
  TooManyTagsError,
  type ReferenceFilter,
  type ReferencePage,
  type ReferenceQuery,
  type ReferenceStore,
  type TagCountQuery,
} from "./reference-store.ts";
import type { ListDialect } from "./sql-dialect.ts";
import { insertMetadata, insertTags } from "./sql-index-rows.ts";

type Fragment = RawBuilder<unknown>;

const COLUMN: Record<AssetSort, Fragment> = {
  created_at: sql`r.created_at`,
  updated_at: sql`r.updated_at`,
  name: sql`r.name`,
  size: sql`r.size`,
  last_access_time: sql`r.last_access_time`,
};

/** The (owner, key, id) index of each sort key (migrations/). */
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

/** Excludes holders of the same hash (SqliteReferenceStore: in-process; PostgreSQL: across processes). */
export interface HashLock {
  init(): Promise<void>;
  run<T>(hash: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A filter's ids (the intersection of index ranges it requires, null for none) and its other conditions over `asset_refs r`. */
interface Conditions {
  ids: Fragment | null;
  /** The owner's condition first. */
  where: Fragment[];
  /** Every condition but the owner's and the name's reads no column of the record but its id. */
  idOnly: boolean;
}

/**
 * Asset records in the four tables of asset-tables.ts, through Kysely on SQLite or PostgreSQL.
 * Every query names one owner: a key reaches only its owner's records. The list's statements
 * are built from `sql` fragments, where each database's planner is steered (sql-dialect.ts).
 */
export class SqlReferenceStore implements ReferenceStore {
  private readonly walkFromMatches: number;
  private readonly db: AssetDb;

  constructor(
    private readonly database: Database<AssetTables>,
    private readonly dialect: ListDialect,
    private readonly hashLock: HashLock,
    options: SqlStoreOptions = {},
  ) {
    this.db = database.db;
    this.walkFromMatches = options.walkFromMatches ?? WALK_FROM_MATCHES;
  }

  get kind(): "sqlite" | "postgres" {
    return this.database.kind;
  }

  async init(): Promise<void> {
    await this.database.migrate(ASSET_MIGRATIONS);
    await this.hashLock.init();
  }

  async create(input: NewReference): Promise<{ reference: AssetReference; created: boolean }> {
    const now = new Date().toISOString();
    const id = randomUUID();
    const tags = limitedTags(input.tags);
    const userMetadata = input.userMetadata ?? {};
    return this.db.transaction().execute(async (tx) => {
      const inserted = await tx
        .insertInto("asset_refs")
        .values({
          id,
          owner: input.owner,
          hash: input.hash,
          name: input.name,
          name_folded: fold(input.name),
          size: input.size,
          mime_type: input.mimeType,
          tags: JSON.stringify(tags),
          user_metadata: JSON.stringify(userMetadata),
          system_metadata: input.systemMetadata ? JSON.stringify(input.systemMetadata) : null,
          preview_id: input.previewId ?? null,
          origin: input.origin ?? null,
          created_at: now,
          updated_at: now,
          last_access_time: now,
        })
        .onConflict((oc) => oc.columns(["owner", "hash", "origin"]).where("origin", "is not", null).doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 0n) {
        const existing = await tx
          .selectFrom("asset_refs")
          .selectAll()
          .where("owner", "=", input.owner)
          .where("hash", "=", input.hash)
          .where("origin", "=", input.origin!)
          .executeTakeFirstOrThrow();
        return { reference: toReference(existing), created: false };
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
    return this.db.transaction().execute(async (tx) => {
      const current = await getIn(tx, id, owner);
      if (!current) return null;
      const name = patch.name ?? current.name;
      const tags = patch.tags ? limitedTags(patch.tags) : current.tags;
      const userMetadata = patch.userMetadata ?? current.userMetadata;
      const systemMetadata = patch.systemMetadata === undefined ? current.systemMetadata : patch.systemMetadata;
      await tx
        .updateTable("asset_refs")
        .set({
          name,
          name_folded: fold(name),
          tags: JSON.stringify(tags),
          user_metadata: JSON.stringify(userMetadata),
          system_metadata: systemMetadata ? JSON.stringify(systemMetadata) : null,
          preview_id: patch.previewId === undefined ? current.previewId : patch.previewId,
          updated_at: laterThan(current.updatedAt),
        })
        .where("id", "=", id)
        .execute();
      if (patch.tags) {
        await tx.deleteFrom("asset_tags").where("ref_id", "=", id).execute();
        await insertTags(tx, id, owner, tags);
      }
      if (patch.userMetadata) {
        await tx.deleteFrom("asset_meta").where("ref_id", "=", id).execute();
        await insertMetadata(tx, id, owner, userMetadata);
      }
      return getIn(tx, id, owner);
    });
  }

  async addTags(
    id: string,
    owner: string,
    tags: string[],
  ): Promise<{ reference: AssetReference; added: string[]; alreadyPresent: string[] } | null> {
    return this.db.transaction().execute(async (tx) => {
      const current = await getIn(tx, id, owner);
      if (!current) return null;
      const wanted = uniqueTags(tags);
      const added = wanted.filter((t) => !current.tags.includes(t));
      const alreadyPresent = wanted.filter((t) => current.tags.includes(t));
      if (added.length > 0) await writeTags(tx, current, limitedTags([...current.tags, ...added]));
      return { reference: (await getIn(tx, id, owner))!, added, alreadyPresent };
    });
  }

  async removeTags(
    id: string,
    owner: string,
    tags: string[],
  ): Promise<{ reference: AssetReference; removed: string[]; notPresent: string[] } | null> {
    return this.db.transaction().execute(async (tx) => {
      const current = await getIn(tx, id, owner);
      if (!current) return null;
      const wanted = uniqueTags(tags);
      const removed = wanted.filter((t) => current.tags.includes(t));
      const notPresent = wanted.filter((t) => !current.tags.includes(t));
      if (removed.length > 0)
        await writeTags(
          tx,
          current,
          current.tags.filter((t) => !removed.includes(t)),
        );
      return { reference: (await getIn(tx, id, owner))!, removed, notPresent };
    });
  }

  async delete(id: string, owner: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const gone = await tx.deleteFrom("asset_refs").where("id", "=", id).where("owner", "=", owner).executeTakeFirst();
      if (gone.numDeletedRows === 0n) return false;
      await tx.deleteFrom("asset_tags").where("ref_id", "=", id).execute();
      await tx.deleteFrom("asset_meta").where("ref_id", "=", id).execute();
      return true;
    });
  }

  async touch(id: string, owner: string): Promise<AssetReference | null> {
    const row = await this.db
      .updateTable("asset_refs")
      .set({ last_access_time: new Date().toISOString() })
      .where("id", "=", id)
      .where("owner", "=", owner)
      .returningAll()
      .executeTakeFirst();
    return row ? toReference(row) : null;
  }

  /**
   * A filter as conditions over `asset_refs r`: `ids`, the ids the required tags and values
   * select (an intersection of ranges of the (owner, tag) and (owner, entry) indexes, null when
   * the filter requires none), and `where`, the rest (the owner, tags_none, the name, a metadata
   * key that may also be missing). The records a filter matches are its `ids` that meet `where`.
   */
  private conditions(filter: ReferenceFilter): Conditions {
    const owner = filter.owner;
    const where: Fragment[] = [sql`r.owner = ${owner}`];
    // One set per `tags_all` tag: at most MAX_FILTER_TAGS (the routes refuse more).
    const sets: Fragment[] = uniqueTags(filter.tagsAll).map(
      (tag) => sql`SELECT t.ref_id AS id FROM asset_tags t WHERE t.owner = ${owner} AND t.tag = ${tag}`,
    );
    const any = uniqueTags(filter.tagsAny);
    if (any.length > 0)
      sets.push(sql`SELECT ${once(any)}t.ref_id AS id FROM asset_tags t WHERE t.owner = ${owner} AND t.tag IN (${sql.join(any)})`);
    const none = uniqueTags(filter.tagsNone);
    if (none.length > 0) where.push(sql`NOT EXISTS (SELECT 1 FROM asset_tags t WHERE t.ref_id = r.id AND t.tag IN (${sql.join(none)}))`);
    if (filter.nameContains) where.push(this.dialect.nameHolds(fold(filter.nameContains)));
    for (const condition of filter.metadata) {
      const values = (anyOf: unknown[]) =>
        sql`SELECT ${once(anyOf)}m.ref_id AS id FROM asset_meta m WHERE m.owner = ${owner} AND m.entry IN (${sql.join(anyOf)})`;
      if (!condition.orMissing) {
        // No values (an empty list) matches nothing: an empty set.
        sets.push(condition.anyOf.length > 0 ? values(condition.anyOf) : sql`SELECT r.id FROM asset_refs r WHERE 1 = 0`);
        continue;
      }
      const missing = sql`NOT EXISTS (SELECT 1 FROM asset_meta m WHERE m.ref_id = r.id AND m.entry = ${condition.orMissing})`;
      where.push(condition.anyOf.length > 0 ? sql`(r.id IN (${values(condition.anyOf)}) OR ${missing})` : sql`(${missing})`);
    }
    const ids = sets.length === 0 ? null : this.dialect.intersection(sets);
    return { ids, where, idOnly: !filter.nameContains };
  }

  /** The WHERE conditions of a filter over `asset_refs r`, with its ids looked up one by one. */
  private where(filter: ReferenceFilter): Fragment[] {
    const { ids, where } = this.conditions(filter);
    return ids ? [this.dialect.memberByLookup(ids), ...where] : where;
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
    const { ids, where, idOnly } = this.conditions(query);
    // where[0] is the owner's condition, which the index rows hold already.
    if (ids && idOnly && this.dialect.sharesMatches) return this.listFromSharedMatches(query, ids, where.slice(1));
    const counted =
      ids && idOnly
        ? sql<{ n: number | string }>`SELECT count(*) AS n FROM (${ids}) r WHERE ${and([sql`1 = 1`, ...where.slice(1)])}`
        : sql<{ n: number | string }>`SELECT count(*) AS n FROM asset_refs r WHERE ${and(this.where(query))}`;
    const total = Number((await counted.execute(this.db)).rows[0]!.n);
    const walk = ids !== null && total >= this.walkFromMatches;
    const from = walk ? this.dialect.walkedInOrder(SORT_INDEX[query.sort]) : sql`asset_refs r`;
    const member = ids ? [walk ? this.dialect.memberRowByRow(ids) : this.dialect.memberByLookup(ids)] : [];
    const { rows } = await pageOf(query, from, [...member, ...where]).execute(this.db);
    return { items: rows.slice(0, query.limit).map(toReference), total, hasMore: rows.length > query.limit };
  }

  /**
   * The total and the page in one statement over one materialized set of the matches' ids (the
   * intersection, then `rest` of the conditions, all on the id): built once, not once for the
   * count and again for the page (on PostgreSQL that build is most of the list's time). The page
   * branch the total chooses runs (walking the sort index, or looking the few matches up); the
   * other is gated off before it reads anything.
   */
  private async listFromSharedMatches(query: ReferenceQuery, ids: Fragment, rest: Fragment[]): Promise<ReferencePage> {
    const owner = sql`r.owner = ${query.owner}`;
    const from = this.walkFromMatches;
    const walk = pageOf(query, this.dialect.walkedInOrder(SORT_INDEX[query.sort]), [
      sql`counted.n >= ${from}`,
      this.dialect.memberRowByRow(sql`SELECT id FROM matched`),
      owner,
    ]);
    const lookup = pageOf(query, sql`asset_refs r`, [
      sql`counted.n < ${from}`,
      this.dialect.memberByLookup(sql`SELECT id FROM matched WHERE counted.n < ${from}`),
      owner,
    ]);
    const dir = direction(query);
    const { rows } = await sql<
      AssetRefRow & { matched_total: number | string }
    >`WITH matched AS MATERIALIZED (SELECT r.id FROM (${ids}) r WHERE ${and([sql`1 = 1`, ...rest])}),
        counted AS MATERIALIZED (SELECT count(*) AS n FROM matched)
       SELECT counted.n AS matched_total, p.* FROM counted LEFT JOIN LATERAL ((${walk}) UNION ALL (${lookup})) p ON true
       ORDER BY ${sql.ref(`p.${query.sort}`)} ${dir}, p.id ${dir}`.execute(this.db);
    // An empty page is still one row (the LEFT JOIN's), carrying the total.
    const found = rows.filter((row) => row.id !== null);
    return {
      items: found.slice(0, query.limit).map(toReference),
      total: Number(rows[0]!.matched_total),
      hasMore: found.length > query.limit,
    };
  }

  async tagCounts(query: TagCountQuery): Promise<{ tags: { name: string; count: number }[]; total: number }> {
    // Every tag in asset_tags is also in asset_tag_names (insertTags writes both), so counting from the names misses none.
    const counted = this.db
      .selectFrom("asset_tag_names as n")
      .leftJoin("asset_tags as t", (join) => join.onRef("t.owner", "=", "n.owner").onRef("t.tag", "=", "n.tag"))
      .select((eb) => ["n.tag as tag", eb.fn.count<number | string>("t.ref_id").as("n")])
      .where("n.owner", "=", query.owner)
      .$if(Boolean(query.prefix), (qb) => qb.where(sql`substr(n.tag, 1, ${[...query.prefix!].length})`, "=", query.prefix!))
      .groupBy("n.tag")
      .$if(!query.includeZero, (qb) => qb.having((eb) => eb.fn.count("t.ref_id"), ">", 0))
      .as("c");
    const ordered = this.db.selectFrom(counted).select(["tag", "n"]);
    const rows = await (query.order === "count_desc" ? ordered.orderBy("n", "desc").orderBy("tag", "asc") : ordered.orderBy("tag", "asc"))
      .limit(query.limit)
      .offset(query.offset)
      .execute();
    const total = await this.db
      .selectFrom(counted)
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .executeTakeFirstOrThrow();
    return { tags: rows.map((r) => ({ name: r.tag, count: Number(r.n) })), total: Number(total.n) };
  }

  async tagHistogram(filter: ReferenceFilter, limit: number): Promise<{ name: string; count: number }[]> {
    const { rows } = await sql<{
      tag: string;
      n: number | string;
    }>`SELECT t.tag AS tag, count(*) AS n FROM asset_tags t JOIN asset_refs r ON r.id = t.ref_id WHERE ${and(this.where(filter))}
       GROUP BY t.tag ORDER BY n DESC, t.tag ASC LIMIT ${limit}`.execute(this.db);
    return rows.map((r) => ({ name: r.tag, count: Number(r.n) }));
  }

  async adoptUnowned(owner: string): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      const moved = await tx.updateTable("asset_refs").set({ owner }).where("owner", "=", "").executeTakeFirst();
      await tx.updateTable("asset_tags").set({ owner }).where("owner", "=", "").execute();
      await tx.updateTable("asset_meta").set({ owner }).where("owner", "=", "").execute();
      const names = tx
        .selectFrom("asset_tag_names")
        .select([sql.val(owner).as("owner"), "tag"])
        .distinct()
        .where("owner", "=", "");
      await tx
        .insertInto("asset_tag_names")
        .columns(["owner", "tag"])
        .expression(names)
        .onConflict((oc) => oc.doNothing())
        .execute();
      await tx.deleteFrom("asset_tag_names").where("owner", "=", "").execute();
      return Number(moved.numUpdatedRows);
    });
  }

  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T> {
    return this.hashLock.run(hash, fn);
  }

  async ping(): Promise<boolean> {
    try {
      await sql`SELECT 1 AS one`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.hashLock.close();
    await this.database.close();
  }
}

/** `ASC` or `DESC`, the query's order. */
function direction(query: ReferenceQuery): Fragment {
  return query.order === "asc" ? sql`ASC` : sql`DESC`;
}

function and(conditions: Fragment[]): Fragment {
  return sql.join(conditions, sql` AND `);
}

/**
 * `DISTINCT ` for a set of several tags or values: the index rows are unique per (record, tag)
 * and (record, entry), so only such a set can name a record twice, and only it pays for DISTINCT.
 */
function once(values: unknown[]): Fragment {
  return new Set(values).size > 1 ? sql`DISTINCT ` : sql``;
}

/** A page's SELECT over `from` (rows `r`) meeting `where`: one row past the limit (hasMore), from the cursor or the offset. */
function pageOf(query: ReferenceQuery, from: Fragment, where: Fragment[]): RawBuilder<AssetRefRow> {
  const column = COLUMN[query.sort];
  const dir = direction(query);
  const cmp = query.order === "asc" ? sql`>` : sql`<`;
  const after = query.after;
  const conditions = after
    ? [...where, sql`(${column} ${cmp} ${after.value} OR (${column} = ${after.value} AND r.id ${cmp} ${after.id}))`]
    : where;
  return sql<AssetRefRow>`SELECT r.* FROM ${from} WHERE ${and(conditions)} ORDER BY ${column} ${dir}, r.id ${dir} LIMIT ${query.limit + 1} OFFSET ${after ? 0 : query.offset}`;
}

async function getIn(db: AssetDb, id: string, owner: string): Promise<AssetReference | null> {
  const row = await db.selectFrom("asset_refs").selectAll().where("id", "=", id).where("owner", "=", owner).executeTakeFirst();
  return row ? toReference(row) : null;
}

async function writeTags(tx: AssetDb, current: AssetReference, tags: string[]): Promise<void> {
  await tx
    .updateTable("asset_refs")
    .set({ tags: JSON.stringify(tags), updated_at: laterThan(current.updatedAt) })
    .where("id", "=", current.id)
    .execute();
  await tx.deleteFrom("asset_tags").where("ref_id", "=", current.id).execute();
  await insertTags(tx, current.id, current.owner, tags);
}

/** The one tag limit, held by every write that sets a record's tags (create, PUT, POST …/tags). */
function limitedTags(tags: string[]): string[] {
  const unique = uniqueTags(tags);
  if (unique.length > MAX_TAGS_PER_ASSET)
    throw new TooManyTagsError(`a record carries at most ${MAX_TAGS_PER_ASSET} tags (this would make ${unique.length})`);
  return unique;
}

export function toReference(row: AssetRefRow): AssetReference {
  return {
    id: row.id,
    owner: row.owner ?? "",
    hash: row.hash,
    name: row.name,
    size: Number(row.size),
    mimeType: row.mime_type,
    tags: JSON.parse(row.tags) as string[],
    userMetadata: JSON.parse(row.user_metadata) as Record<string, unknown>,
    systemMetadata:
      row.system_metadata === null || row.system_metadata === undefined
        ? null
        : (JSON.parse(row.system_metadata) as Record<string, unknown>),
    previewId: row.preview_id ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastAccessTime: row.last_access_time ?? row.created_at,
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
