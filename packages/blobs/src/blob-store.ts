import type { Readable } from "node:stream";
import type { Sidecar } from "./sidecar.ts";

/**
 * The BlobStore port: content-addressed bytes plus the sidecar (sidecar.ts) kept beside them.
 *
 * Writing is two steps so that nothing partial is ever visible under a hash name:
 *   `stage(stream)` streams into a temporary object while hashing (blake3) and resolves once
 *   every byte is durable there; `staged.commit(...)` then publishes it under its hash (or, if
 *   that hash exists, drops the temporary and writes nothing under the hash name) and merges
 *   the sidecar; `staged.discard()` drops it. Two commits of the same new content racing each
 *   other both succeed and leave one object.
 *
 * Bytes are never removed: deleting an asset drops its references, the content stays.
 *
 * Two implementations: the filesystem (embedded default) and S3/MinIO; both pass
 * `test/blob-store-conformance.ts`.
 */
export interface BlobStore {
  readonly kind: "fs" | "s3";
  /** Create what the store needs (directories, bucket). Idempotent. */
  init(): Promise<void>;
  stage(source: Readable, opts?: StageOptions): Promise<StagedBlob>;
  stat(hash: string): Promise<BlobStat | null>;
  /** Whole object or an inclusive byte range; rejects with BlobNotFoundError. */
  read(hash: string, range?: ByteRange): Promise<Readable>;
  getSidecar(hash: string): Promise<Sidecar | null>;
  /** Read-modify-write of the sidecar, serialised per hash in this process. Rejects with BlobNotFoundError. */
  updateSidecar(hash: string, update: SidecarUpdate): Promise<Sidecar>;
  /** Remove temporaries left by a crash; run at start, before serving. Returns how many were removed. */
  sweepTemporaries(): Promise<number>;
  /**
   * The file holding a committed blob's bytes when the store keeps them on this machine's disk
   * (fs), so sharp can read them in place; null when it has none (S3: `read` them). The file
   * may not exist: `stat` says whether the blob does.
   */
  localPath(hash: string): string | null;
  /** A short-lived URL a client can fetch the bytes from directly, or null when the store has none (fs). */
  presignedUrl(hash: string, opts: { seconds: number; contentType?: string }): Promise<string | null>;
  /** Resumable (tus) uploads in progress, kept in this store so any process sharing it can take their next request. */
  readonly partials: PartialUploads;
  /** Cheap liveness probe of the backend. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StageOptions {
  /** Sees every chunk, in order, as it is hashed (the route keeps the image's first bytes). */
  onChunk?: (chunk: Buffer) => void;
}

export interface StagedBlob {
  readonly hash: string;
  readonly size: number;
  /** A local file holding the staged bytes when the store has one (fs), so probes read it in place. */
  readonly localPath: string | null;
  commit(update: SidecarUpdate): Promise<CommitResult>;
  discard(): Promise<void>;
}

export type SidecarUpdate = (existing: Sidecar | null) => Sidecar;

export interface CommitResult {
  /** False when the hash was already stored: nothing was written under its name. */
  created: boolean;
  sidecar: Sidecar;
}

export interface BlobStat {
  size: number;
  /** Last write of the bytes (ms since epoch): a duplicate commit must leave it unchanged. */
  modifiedAt: number;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

export class BlobNotFoundError extends Error {
  constructor(readonly hash: string) {
    super(`no blob ${hash}`);
  }
}

/** The backend itself failed (disk, S3 down): the route answers 503. */
export class BlobStoreUnavailableError extends Error {}

/** A resumable (tus) upload as the blob store keeps it, so that any process sharing the store can take its next request. */
export interface PartialUpload {
  /** Random, server-made (tus's 32 hex digits); never a path from the client. */
  id: string;
  /** Upload-Length. */
  size: number;
  /** Bytes stored so far (the size once the asset is made). */
  offset: number;
  /** Upload-Metadata as the client sent it. */
  metadata: Record<string, string | null>;
  /** The principal of the key that created it: no other key reaches it. */
  owner: string;
  /** ISO 8601; the upload expires TUS_EXPIRY after it. */
  createdAt: string;
  /** The asset made when its last byte landed (the bytes then live under their hash). */
  assetId?: string;
}

/**
 * The partial uploads of one BlobStore, kept beside its blobs (filesystem: `<root>/uploads/`;
 * S3: `uploads/` in the bucket, as a multipart upload). Bytes are only appended at the stored
 * offset; `append` resolves with the new offset, and bytes received before a failure that the
 * store already holds count (a resumed upload continues after them).
 */
export interface PartialUploads {
  create(upload: Omit<PartialUpload, "offset" | "assetId">): Promise<void>;
  get(id: string): Promise<PartialUpload | null>;
  /** Append `source` at `offset`; `onChunk` sees each chunk, in order, as it is taken (the caller hashes). */
  append(id: string, offset: number, source: Readable, onChunk: (chunk: Buffer) => void): Promise<number>;
  /** Every byte has landed: the upload as one file or object, ready to be read or published. */
  assemble(id: string): Promise<AssembledUpload>;
  /** The asset is made: its bytes are under their hash now; the record stays (HEAD answers Asset-Id) until it expires. */
  finish(id: string, assetId: string): Promise<void>;
  /** Remove the upload and whatever bytes it holds. False when there was none. */
  remove(id: string): Promise<boolean>;
  /** Every upload (the expiry sweep). */
  list(): Promise<PartialUpload[]>;
}

export interface AssembledUpload {
  size: number;
  /** A file holding the bytes when the store has one (fs), so probes read it in place. */
  localPath: string | null;
  read(range?: ByteRange): Promise<Readable>;
  /** The bytes as staged content of hash `hash`: commit publishes them under it without reading them again. */
  stage(hash: string): StagedBlob;
}

/** tus ids as @tus/server makes them; anything else names no upload (and never reaches a path). */
export const UPLOAD_ID_RE = /^[0-9a-f]{32}$/;
