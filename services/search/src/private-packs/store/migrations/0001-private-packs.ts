import { sql, type Migration } from "kysely";

/**
 * Publishers, their tokens, packs, versions, pending uploads and the revision replicas poll. The
 * same statements run on SQLite and PostgreSQL: ids and times are TEXT (times as ISO-8601, which
 * sort as text), flags and sizes INTEGER. Ids are kept as the publisher sent them, with a `key`
 * column (lowercased) that makes them unique case-insensitively, as the mirror's ids are compared.
 */
const STATEMENTS = [
  `CREATE TABLE private_publishers (
     key TEXT PRIMARY KEY, id TEXT NOT NULL, name TEXT NOT NULL, owner TEXT NOT NULL,
     status TEXT NOT NULL, created_at TEXT NOT NULL)`,
  `CREATE TABLE private_tokens (
     id TEXT PRIMARY KEY, publisher_key TEXT NOT NULL REFERENCES private_publishers(key),
     name TEXT NOT NULL, description TEXT NOT NULL, digest TEXT NOT NULL, hint TEXT NOT NULL, created_at TEXT NOT NULL)`,
  `CREATE INDEX private_tokens_publisher ON private_tokens (publisher_key)`,
  `CREATE TABLE private_nodes (
     key TEXT PRIMARY KEY, id TEXT NOT NULL, publisher_key TEXT NOT NULL REFERENCES private_publishers(key),
     status TEXT NOT NULL, fields TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
  `CREATE TABLE private_versions (
     node_key TEXT NOT NULL REFERENCES private_nodes(key), version TEXT NOT NULL, id TEXT NOT NULL,
     status TEXT NOT NULL, status_reason TEXT NOT NULL, deprecated INTEGER NOT NULL, fields TEXT NOT NULL,
     archive_hash TEXT NOT NULL, archive_size INTEGER NOT NULL, classes TEXT NOT NULL, created_at TEXT NOT NULL,
     PRIMARY KEY (node_key, version))`,
  `CREATE TABLE private_upload_grants (
     digest TEXT PRIMARY KEY, publisher_id TEXT NOT NULL, node_id TEXT NOT NULL, version TEXT NOT NULL,
     request TEXT NOT NULL, expires_at TEXT NOT NULL)`,
  // One row, bumped by every change a reader serves (publish, status, deprecation, removal), so replicas notice it.
  `CREATE TABLE private_revision (id INTEGER PRIMARY KEY, revision INTEGER NOT NULL)`,
  `INSERT INTO private_revision (id, revision) VALUES (1, 0)`,
];

export const privatePacks: Migration = {
  async up(db) {
    for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
  },
};
