import type { AssetSort, SortOrder } from "@app/contracts";

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
  /** Create the tables (idempotent, safe when several processes start at once). */
  init(): Promise<void>;
  /**
   * A new record. With an `origin` (e.g. an upload's type and subfolder), at most one record
   * exists per (hash, origin): the existing one is answered with `created: false`.
   */
  create(input: NewReference): Promise<{ reference: AssetReference; created: boolean }>;
  get(id: string): Promise<AssetReference | null>;
  /** Replace the given fields; null when the id is unknown. */
  update(id: string, patch: ReferencePatch): Promise<AssetReference | null>;
  addTags(id: string, tags: string[]): Promise<{ reference: AssetReference; added: string[]; alreadyPresent: string[] } | null>;
  removeTags(id: string, tags: string[]): Promise<{ reference: AssetReference; removed: string[]; notPresent: string[] } | null>;
  /** Remove the record; answers how many records still name its hash, or null when the id is unknown. */
  delete(id: string): Promise<{ hash: string; remaining: number } | null>;
  countByHash(hash: string): Promise<number>;
  list(query: ReferenceQuery): Promise<ReferencePage>;
  tagCounts(query: TagCountQuery): Promise<{ tags: { name: string; count: number }[]; total: number }>;
  /**
   * Run `fn` while no other holder of the same hash runs (in every process sharing this store):
   * committing bytes and recording them is one step against deleting the last record and its bytes.
   */
  withHashLock<T>(hash: string, fn: () => Promise<T>): Promise<T>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** The database itself failed (unreachable, shut down, gone): the route answers 503. */
export class ReferenceStoreUnavailableError extends Error {}

export interface AssetReference {
  id: string;
  /** blake3 hex of the bytes. */
  hash: string;
  name: string;
  size: number;
  mimeType: string;
  tags: string[];
  userMetadata: Record<string, unknown>;
  systemMetadata: Record<string, unknown> | null;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
  updatedAt: string;
}

export interface NewReference {
  hash: string;
  name: string;
  size: number;
  mimeType: string;
  tags: string[];
  userMetadata?: Record<string, unknown>;
  systemMetadata?: Record<string, unknown> | null;
  origin?: string;
}

export interface ReferencePatch {
  name?: string;
  tags?: string[];
  userMetadata?: Record<string, unknown>;
  systemMetadata?: Record<string, unknown> | null;
}

/** Where a keyset page starts: strictly after this (sort value, id) in the requested order. */
export interface ReferenceKey {
  value: string | number;
  id: string;
}

export interface ReferenceQuery {
  includeTags: string[];
  excludeTags: string[];
  /** Lower-cased substring of the lower-cased name. */
  nameContains?: string;
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
  prefix?: string;
  order: "count_desc" | "name_asc";
  limit: number;
  offset: number;
}

/** The sort value of a record, as a keyset cursor carries it. */
export function sortValue(ref: AssetReference, sort: AssetSort): string | number {
  switch (sort) {
    case "created_at":
      return ref.createdAt;
    case "updated_at":
      return ref.updatedAt;
    case "name":
      return ref.name;
    case "size":
      return ref.size;
  }
}

/** Keep the first occurrence of each tag, in order. */
export function uniqueTags(tags: string[]): string[] {
  return [...new Set(tags)];
}
