import type { Migration } from "kysely";
import { assetReferences } from "./0001-asset-references.ts";

/**
 * The record store's migrations, applied in the order of their names, each once (Kysely's
 * Migrator records them in `kysely_migration`), on SQLite and PostgreSQL alike.
 *
 * To add tables or columns: write `NNNN-what-it-adds.ts` in this folder exporting a Migration
 * (`up(db)`: Kysely's schema builder; `dialectOf(db)` from @app/sql where the two databases
 * differ), and add it below under its file name. A migration that has run is never edited:
 * change the schema with a new one.
 */
export const ASSET_MIGRATIONS: Record<string, Migration> = {
  "0001-asset-references": assetReferences,
};
