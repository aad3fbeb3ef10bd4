import type { Migration } from "kysely";
import { privatePacks } from "./0001-private-packs.ts";

/**
 * The private packs' migrations, applied in the order of their names, each once, in the asset
 * records' database (@app/sql's Migrator, recorded in `private_pack_migration`: search and upload
 * each keep their list, so neither service's code reaches into the other's). A migration that has
 * run is never edited: change the schema with a new file here.
 */
export const PRIVATE_PACK_MIGRATIONS: Record<string, Migration> = {
  "0001-private-packs": privatePacks,
};

/** Where the Migrator records which of them ran. */
export const PRIVATE_PACK_MIGRATION_TABLE = "private_pack_migration";
