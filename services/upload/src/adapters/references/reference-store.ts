import type { AssetSort, SortOrder } from "@app/contracts";
import type { AssetReference, NewReference, ReferenceKey, ReferencePatch } from "../../domain/asset-reference.ts";
import type { MetadataCondition } from "../../domain/metadata-index.ts";

/**
 * The ReferenceStore port: asset records (ComfyUI's "asset references"), each naming stored
 * bytes by hash. Several records may name the same bytes; the bytes themselves stay in the
 * BlobStore with their sidecar record, which remains the source of truth for what is stored.
 *
 * Two implementations: SQLite in a file under DATA_DIR (embedded) and PostgreSQL
 * (DATABASE_URL); both pass `test/reference-store-conformance.ts`.
 */
export interface ReferenceStore {
  readonly kind: "sqlite" | "postgres";
  /** Create the tables, or bring an older store's tables up to date (idempotent, safe when several processes start at once). */
  init(): Promise<void>;
  /**
   * A new record. With an `origin` (e.g. an upload's type and subfolder), at most one record
   * exists per (owner, hash, origin): the existing one is answered with `created: false`.
   */
  create(input: NewReference): Promise<{ reference: AssetReference; created: boolean }>;
  /** The owner's record, or null (another owner's record is null too: it is not this key's to see). */
  get(id: string, owner: string): Promise<AssetReference | null>;
  /** Replace the given fields; null when the owner has no such record. */
  update(id: string, owner: string, patch: ReferencePatch): Promise<AssetReference | null>;
  /** Throws TooManyTagsError when the record would carry more than MAX_TAGS_PER_ASSET. */
  addTags(
    id: string,
    owner: string,
    tags: string[],
  ): Promise<{ reference: AssetReference; added: string[]; alreadyPresent: string[] } | null>;
  removeTags(
    id: string,
    owner: string,
    tags: string[],
  ): Promise<{ reference: AssetReference; removed: string[]; notPresent: string[] } | null>;
  /** Remove the record (the bytes stay, as ComfyUI keeps content); false when the owner has no such record. */
  delete(id: string, owner: string): Promise<boolean>;
  /**
   * The content is being read: moves last_access_time (the sort of that name) and answers the
   * record as it now is, or null as `get` would. One statement, so a download (each range of a
   * video) pays one trip to the database for finding the record and touching it.
   */
  touch(id: string, owner: string): Promise<AssetReference | null>;
  list(query: ReferenceQuery): Promise<ReferencePage>;
  tagCounts(query: TagCountQuery): Promise<{ tags: { name: string; count: number }[]; total: number }>;
  /** How many of the filtered records carry each tag, most used first (GET /api/assets/tags/refine). */
  tagHistogram(filter: ReferenceFilter, limit: number): Promise<{ name: string; count: number }[]>;
  /** Hand records written before owners existed (owner "") to `owner`; answers how many. */
  adoptUnowned(owner: string): Promise<number>;
  /**
   * Run `fn` while no other holder of the same hash runs (in every process sharing this store):
   * committing bytes and recording them is one step.
   */
  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** A write would leave a record with more tags than MAX_TAGS_PER_ASSET: nothing was changed. */
export class TooManyTagsError extends Error {}

/** The database itself failed (unreachable, shut down, gone): the route answers 503. */
export { DatabaseUnavailableError as ReferenceStoreUnavailableError } from "@app/sql";

/** Which of an owner's records a list, a count or a histogram covers. */
export interface ReferenceFilter {
  owner: string;
  /** Every one of these tags. */
  tagsAll: string[];
  /** At least one of these (none given: no condition). */
  tagsAny: string[];
  /** None of these (wins over tagsAny). */
  tagsNone: string[];
  /** Lower-cased substring of the lower-cased name. */
  nameContains?: string;
  /** `metadata_filter`, as index conditions (domain/metadata-index.ts): every one must hold. */
  metadata: MetadataCondition[];
}

export interface ReferenceQuery extends ReferenceFilter {
  sort: AssetSort;
  order: SortOrder;
  limit: number;
  offset: number;
  after?: ReferenceKey;
}

export interface ReferencePage {
  items: AssetReference[];
  /** Records matching the filters, whatever the page. */
  total: number;
  /** More records follow this page. */
  hasMore: boolean;
}

export interface TagCountQuery {
  owner: string;
  prefix?: string;
  /** Also the owner's tags no record carries any more, with count 0. */
  includeZero: boolean;
  order: "count_desc" | "name_asc";
  limit: number;
  offset: number;
}
