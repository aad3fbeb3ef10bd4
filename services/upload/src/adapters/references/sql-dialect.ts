import { sql, type RawBuilder } from "kysely";

type Fragment = RawBuilder<unknown>;

/**
 * Where the two databases need different SQL for the same list: each planner is steered to the
 * plan that answers a filtered page over 1,000,000 records without reading every match.
 */
export interface ListDialect {
  /** `name_folded` holds `needle` (a substring, both folded). */
  nameHolds(needle: string): Fragment;
  /** The ids (column `id`) every one of `sets` holds, each once: sets are SELECTs of a column `id`, each naming an id once. */
  intersection(sets: Fragment[]): Fragment;
  /** `asset_refs r`, read through its sort index `index` in that index's order (see SqlReferenceStore.list). */
  walkedInOrder(index: string): Fragment;
  /** `r.id` is one of the subquery's `ids`, tested row by row as the rows come (a hash probe), never turned into a join. */
  memberRowByRow(ids: Fragment): Fragment;
  /** `r.id` is one of the subquery's `ids`, answered by looking up each of those ids. */
  memberByLookup(ids: Fragment): Fragment;
  /**
   * Whether a filtered list answers its total and its page in one statement over one
   * materialized set of matches (a MATERIALIZED CTE and a LATERAL join): PostgreSQL, where it
   * halves the list; SQLite keeps two statements.
   */
  readonly sharesMatches: boolean;
}

export const SQLITE_LIST: ListDialect = {
  nameHolds: (needle) => sql`instr(r.name_folded, ${needle}) > 0`,
  // A record holds a tag or a value once, but may match several of one `tags_any` or one list
  // of values. INTERSECT merges the index ranges through one temporary index (probing one
  // range's index per id of the other took about three times as long).
  intersection: (sets) => sql.join(sets, sql` INTERSECT `),
  // SQLite's planner, left alone, reads every match's row to sort them: the index is named.
  walkedInOrder: (index) => sql`asset_refs r INDEXED BY ${sql.raw(index)}`,
  // An IN subquery is a probe of a temporary index of the ids, in either case.
  memberRowByRow: (ids) => sql`r.id IN (${ids})`,
  memberByLookup: (ids) => sql`r.id IN (${ids})`,
  sharesMatches: false,
};

export const POSTGRES_LIST: ListDialect = {
  nameHolds: (needle) => sql`strpos(r.name_folded, ${needle}) > 0`,
  // The first set, kept where the others hold it: the planner merge-joins index ranges already
  // in id order, where INTERSECT hashed both.
  intersection: ([first, ...rest]) =>
    rest.length === 0
      ? sql`SELECT s.id FROM (${first}) s`
      : sql`SELECT s.id FROM (${first}) s WHERE ${sql.join(
          rest.map((set) => sql`s.id IN (${set})`),
          sql` AND `,
        )}`,
  walkedInOrder: () => sql`asset_refs r`,
  // A top-level IN subquery becomes a join, and for 10,000 ids of 1,000,000 the planner joins a
  // scan of every record and sorts; inside an OR it stays a hashed filter of the ordered index
  // scan, which stops at the page's last row.
  memberRowByRow: (ids) => sql`(r.id IN (${ids}) OR false)`,
  // The ids first (an InitPlan), then an index lookup of each: never a scan of every record.
  memberByLookup: (ids) => sql`r.id = ANY (ARRAY(${ids}))`,
  // The total and the page each built the same intersection.
  sharesMatches: true,
};
