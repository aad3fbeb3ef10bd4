import type { Readable } from "node:stream";
import type { ByteRange, StagedBlob } from "./blob-store.ts";

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
