import type {
  NewToken,
  PrivateNodeRow,
  PrivatePackRepository,
  PrivateVersionRow,
  PublishOutcome,
  PublisherRow,
  TokenRow,
  UploadGrant,
} from "./private-pack-repository.ts";
import { openKyselyRunner } from "./kysely-runner.ts";
import { isUniqueViolation, type SqlRunner } from "./sql-runner.ts";

type Row = Record<string, unknown>;

/** The repository over SQL; the runner is SQLite's or PostgreSQL's (see `openPrivatePackRepository`). */
export class SqlPrivatePackRepository implements PrivatePackRepository {
  constructor(private readonly db: SqlRunner) {}

  async createPublisher(p: PublisherRow): Promise<boolean> {
    try {
      await this.db.run("INSERT INTO private_publishers (key, id, name, owner, status, created_at) VALUES (?, ?, ?, ?, ?, ?)", [
        keyOf(p.id),
        p.id,
        p.name,
        p.owner,
        p.status,
        p.createdAt,
      ]);
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async publisher(id: string): Promise<PublisherRow | null> {
    const [row] = await this.db.all("SELECT * FROM private_publishers WHERE key = ?", [keyOf(id)]);
    return row
      ? { id: str(row.id), name: str(row.name), owner: str(row.owner), status: str(row.status), createdAt: str(row.created_at) }
      : null;
  }

  async addToken(t: NewToken): Promise<void> {
    await this.db.run(
      "INSERT INTO private_tokens (id, publisher_key, name, description, digest, hint, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [t.id, keyOf(t.publisherId), t.name, t.description, t.digest, t.hint, t.createdAt],
    );
  }

  async tokens(publisherId: string): Promise<TokenRow[]> {
    const rows = await this.db.all(
      "SELECT t.*, p.id AS publisher_id FROM private_tokens t JOIN private_publishers p ON p.key = t.publisher_key WHERE t.publisher_key = ? ORDER BY t.created_at, t.id",
      [keyOf(publisherId)],
    );
    return rows.map((r) => ({
      id: str(r.id),
      publisherId: str(r.publisher_id),
      name: str(r.name),
      description: str(r.description),
      hint: str(r.hint),
      createdAt: str(r.created_at),
    }));
  }

  async tokenDigests(publisherId: string): Promise<string[]> {
    const rows = await this.db.all("SELECT digest FROM private_tokens WHERE publisher_key = ?", [keyOf(publisherId)]);
    return rows.map((r) => str(r.digest));
  }

  async revokeToken(publisherId: string, tokenId: string): Promise<boolean> {
    return (await this.db.run("DELETE FROM private_tokens WHERE publisher_key = ? AND id = ?", [keyOf(publisherId), tokenId])) > 0;
  }

  async node(id: string): Promise<PrivateNodeRow | null> {
    const [row] = await this.db.all(NODE_SELECT + " WHERE n.key = ?", [keyOf(id)]);
    return row ? nodeRow(row) : null;
  }

  async nodes(): Promise<PrivateNodeRow[]> {
    return (await this.db.all(NODE_SELECT + " ORDER BY n.key")).map(nodeRow);
  }

  async version(nodeId: string, version: string): Promise<PrivateVersionRow | null> {
    const [row] = await this.db.all(VERSION_SELECT + " WHERE v.node_key = ? AND v.version = ?", [keyOf(nodeId), version]);
    return row ? versionRow(row) : null;
  }

  async versions(nodeId: string): Promise<PrivateVersionRow[]> {
    return (await this.db.all(VERSION_SELECT + " WHERE v.node_key = ? ORDER BY v.created_at, v.version", [keyOf(nodeId)])).map(versionRow);
  }

  async addGrant(g: UploadGrant): Promise<void> {
    await this.db.run(
      "INSERT INTO private_upload_grants (digest, publisher_id, node_id, version, request, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
      [g.digest, g.publisherId, g.nodeId, g.version, JSON.stringify(g.request), g.expiresAt],
    );
  }

  async takeGrant(digest: string): Promise<UploadGrant | null> {
    const [row] = await this.db.all("DELETE FROM private_upload_grants WHERE digest = ? RETURNING *", [digest]);
    if (!row) return null;
    return {
      digest: str(row.digest),
      publisherId: str(row.publisher_id),
      nodeId: str(row.node_id),
      version: str(row.version),
      request: JSON.parse(str(row.request)) as UploadGrant["request"],
      expiresAt: str(row.expires_at),
    };
  }

  async publish(node: PrivateNodeRow, version: PrivateVersionRow): Promise<PublishOutcome> {
    try {
      return await this.db.transaction(async (tx) => {
        const [owner] = await tx.all("SELECT publisher_key FROM private_nodes WHERE key = ?", [keyOf(node.id)]);
        if (owner && owner.publisher_key !== keyOf(node.publisherId)) return "node-taken";
        if (owner) {
          await tx.run("UPDATE private_nodes SET fields = ?, updated_at = ? WHERE key = ?", [
            JSON.stringify(node.fields),
            node.updatedAt,
            keyOf(node.id),
          ]);
        } else {
          await tx.run(
            "INSERT INTO private_nodes (key, id, publisher_key, status, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [keyOf(node.id), node.id, keyOf(node.publisherId), node.status, JSON.stringify(node.fields), node.createdAt, node.updatedAt],
          );
        }
        await tx.run(
          "INSERT INTO private_versions (node_key, version, id, status, status_reason, deprecated, fields, archive_hash, archive_size, classes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          [
            keyOf(node.id),
            version.version,
            version.id,
            version.status,
            version.statusReason,
            version.deprecated ? 1 : 0,
            JSON.stringify(version.fields),
            version.archiveHash,
            version.archiveSize,
            JSON.stringify(version.classes),
            version.createdAt,
          ],
        );
        await bump(tx);
        return "published";
      });
    } catch (err) {
      // Two uploads of one version raced: the second one's insert is refused, and its transaction rolled back.
      if (isUniqueViolation(err)) return "version-exists";
      throw err;
    }
  }

  async setVersionStatus(nodeId: string, version: string, status: string, reason: string): Promise<boolean> {
    return this.changed("UPDATE private_versions SET status = ?, status_reason = ? WHERE node_key = ? AND version = ?", [
      status,
      reason,
      keyOf(nodeId),
      version,
    ]);
  }

  async setDeprecated(nodeId: string, version: string, deprecated: boolean): Promise<boolean> {
    return this.changed("UPDATE private_versions SET deprecated = ? WHERE node_key = ? AND version = ?", [
      deprecated ? 1 : 0,
      keyOf(nodeId),
      version,
    ]);
  }

  async revision(): Promise<number> {
    const [row] = await this.db.all("SELECT revision FROM private_revision WHERE id = 1");
    return Number(row?.revision ?? 0);
  }

  /** A change readers serve, with the revision bumped in the same transaction. */
  private changed(sql: string, params: unknown[]): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      if ((await tx.run(sql, params)) === 0) return false;
      await bump(tx);
      return true;
    });
  }

  async deleteVersion(nodeId: string, version: string): Promise<PrivateVersionRow | null> {
    const found = await this.version(nodeId, version);
    if (!found) return null;
    return (await this.changed("DELETE FROM private_versions WHERE node_key = ? AND version = ?", [keyOf(nodeId), version])) ? found : null;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** PostgreSQL when a database URL is given, else the SQLite file; the private packs' migrations applied. */
export async function openPrivatePackRepository(opts: { databaseUrl?: string; sqliteFile: string }): Promise<SqlPrivatePackRepository> {
  return new SqlPrivatePackRepository(
    await openKyselyRunner(
      opts.databaseUrl ? { kind: "postgres", url: opts.databaseUrl, maxConnections: 4 } : { kind: "sqlite", file: opts.sqliteFile },
    ),
  );
}

function bump(tx: SqlRunner): Promise<number> {
  return tx.run("UPDATE private_revision SET revision = revision + 1 WHERE id = 1");
}

const NODE_SELECT = "SELECT n.*, p.id AS publisher_id FROM private_nodes n JOIN private_publishers p ON p.key = n.publisher_key";
const VERSION_SELECT = "SELECT v.*, n.id AS node_id FROM private_versions v JOIN private_nodes n ON n.key = v.node_key";

function keyOf(id: string): string {
  return id.toLowerCase();
}

/** A column read as text (the drivers answer TEXT as strings, INTEGER as numbers or bigints). */
function str(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "bigint" ? v.toString() : "";
}

function nodeRow(r: Row): PrivateNodeRow {
  return {
    id: str(r.id),
    publisherId: str(r.publisher_id),
    status: str(r.status),
    fields: JSON.parse(str(r.fields)) as Record<string, unknown>,
    createdAt: str(r.created_at),
    updatedAt: str(r.updated_at),
  };
}

function versionRow(r: Row): PrivateVersionRow {
  return {
    nodeId: str(r.node_id),
    version: str(r.version),
    id: str(r.id),
    status: str(r.status),
    statusReason: str(r.status_reason),
    deprecated: Number(r.deprecated) === 1,
    fields: JSON.parse(str(r.fields)) as Record<string, unknown>,
    archiveHash: str(r.archive_hash),
    archiveSize: Number(r.archive_size),
    classes: JSON.parse(str(r.classes)) as string[],
    createdAt: str(r.created_at),
  };
}
