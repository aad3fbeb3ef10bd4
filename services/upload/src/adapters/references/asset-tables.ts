import type { ColumnType, Kysely, Selectable } from "kysely";

/**
 * The record store's tables (migrations/ makes them): `asset_refs` (one row a record; tags kept
 * in order as JSON), `asset_tags` (one row per record and tag, for filters and counts),
 * `asset_tag_names` (every tag an owner has used, for `include_zero`) and `asset_meta` (the
 * user_metadata index of domain/metadata-index.ts). Every row carries its owner. Timestamps are
 * ISO 8601 text in UTC with milliseconds, so they sort as text and round-trip through a cursor.
 */
export interface AssetTables {
  asset_refs: {
    id: string;
    owner: string;
    hash: string;
    name: string;
    name_folded: string;
    /** PostgreSQL answers a bigint as text. */
    size: ColumnType<number | string, number, number>;
    mime_type: string;
    tags: string;
    user_metadata: string;
    system_metadata: string | null;
    preview_id: string | null;
    origin: string | null;
    created_at: string;
    updated_at: string;
    last_access_time: string | null;
  };
  asset_tags: { ref_id: string; owner: string; tag: string };
  asset_tag_names: { owner: string; tag: string };
  asset_meta: { ref_id: string; owner: string; entry: string };
}

export type AssetRefRow = Selectable<AssetTables["asset_refs"]>;

/** The store's database, or one of its transactions. */
export type AssetDb = Kysely<AssetTables>;
