/** A publisher of private packs, owned by the API-key principal that made it. */
export interface PublisherRow {
  id: string;
  name: string;
  /** The owning key's principal (its key-file label). */
  owner: string;
  status: string;
  createdAt: string;
}

/** A publishing token as listed: its digest never leaves the repository. */
export interface TokenRow {
  id: string;
  publisherId: string;
  name: string;
  description: string;
  /** Enough of the token for its owner to tell tokens apart; never enough to use it. */
  hint: string;
  createdAt: string;
}

export interface NewToken extends TokenRow {
  /** sha256 of the token, hex. */
  digest: string;
}

export interface PrivateNodeRow {
  id: string;
  publisherId: string;
  status: string;
  /** The node's fields as published (name, description, license, repository, ...). */
  fields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface PrivateVersionRow {
  nodeId: string;
  version: string;
  id: string;
  status: string;
  statusReason: string;
  deprecated: boolean;
  /** The version's fields as published (dependencies, changelog, supported_...). */
  fields: Record<string, unknown>;
  /** The archive's blob (blake3 hex) and size. */
  archiveHash: string;
  archiveSize: number;
  /** Node classes read from the archive. */
  classes: string[];
  createdAt: string;
}

/** A signed upload URL's server side: what its PUT may create, until when. Used once. */
export interface UploadGrant {
  /** sha256 of the URL's secret, hex. */
  digest: string;
  publisherId: string;
  nodeId: string;
  version: string;
  /** The publish request's node and node_version, kept for the PUT that completes it. */
  request: { node: Record<string, unknown>; node_version: Record<string, unknown> };
  expiresAt: string;
}

export type PublishOutcome = "published" | "version-exists" | "node-taken";

/**
 * The private packs' persistence port: publishers, their tokens, packs, versions and pending
 * uploads. Ids are matched case-insensitively. Two implementations over one set of statements
 * (`sql-private-pack-repository.ts`): SQLite embedded, PostgreSQL at scale.
 */
export interface PrivatePackRepository {
  /** False when a publisher with that id (in any case) exists. */
  createPublisher(p: PublisherRow): Promise<boolean>;
  publisher(id: string): Promise<PublisherRow | null>;
  addToken(t: NewToken): Promise<void>;
  tokens(publisherId: string): Promise<TokenRow[]>;
  /** The digests of a publisher's live tokens. */
  tokenDigests(publisherId: string): Promise<string[]>;
  /** False when the publisher has no such token. */
  revokeToken(publisherId: string, tokenId: string): Promise<boolean>;
  node(id: string): Promise<PrivateNodeRow | null>;
  nodes(): Promise<PrivateNodeRow[]>;
  version(nodeId: string, version: string): Promise<PrivateVersionRow | null>;
  versions(nodeId: string): Promise<PrivateVersionRow[]>;
  addGrant(g: UploadGrant): Promise<void>;
  /** The grant, removed in the same statement, so a URL completes one upload at most. */
  takeGrant(digest: string): Promise<UploadGrant | null>;
  /** The node is made (or its fields refreshed) and the version added, in one transaction. */
  publish(node: PrivateNodeRow, version: PrivateVersionRow): Promise<PublishOutcome>;
  setVersionStatus(nodeId: string, version: string, status: string, reason: string): Promise<boolean>;
  setDeprecated(nodeId: string, version: string, deprecated: boolean): Promise<boolean>;
  /** The removed version, or null when there was none. */
  deleteVersion(nodeId: string, version: string): Promise<PrivateVersionRow | null>;
  /** A number that changes whenever a published version, its status or its deprecation changes. */
  revision(): Promise<number>;
  close(): Promise<void>;
}
