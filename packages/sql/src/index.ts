export { openDatabase, type Database, type DatabaseConfig } from "./open-database.ts";
export { DatabaseUnavailableError } from "./unavailable.ts";
export { dialectOf } from "./dialect-of.ts";
