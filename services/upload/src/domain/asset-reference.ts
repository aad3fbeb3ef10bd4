import type { AssetSort } from "@app/contracts";

/** An asset reference (ComfyUI's word): one owner's record naming stored bytes by hash, a row of the ReferenceStore. */
export interface AssetReference {
  id: string;
  /** The API key's principal (its key-file label) that made the record; "" for records older than owners. */
  owner: string;
  /** blake3 hex of the bytes. */
  hash: string;
  name: string;
  size: number;
  mimeType: string;
  tags: string[];
  userMetadata: Record<string, unknown>;
  systemMetadata: Record<string, unknown> | null;
  /** Another of the owner's records shown as this one's preview. */
  previewId: string | null;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
  updatedAt: string;
  lastAccessTime: string;
}

export interface NewReference {
  owner: string;
  hash: string;
  name: string;
  size: number;
  mimeType: string;
  tags: string[];
  userMetadata?: Record<string, unknown>;
  systemMetadata?: Record<string, unknown> | null;
  previewId?: string | null;
  origin?: string;
}

export interface ReferencePatch {
  name?: string;
  tags?: string[];
  userMetadata?: Record<string, unknown>;
  systemMetadata?: Record<string, unknown> | null;
  previewId?: string | null;
}

/** Where a keyset page starts: strictly after this (sort value, id) in the requested order. */
export interface ReferenceKey {
  value: string | number;
  id: string;
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
    case "last_access_time":
      return ref.lastAccessTime;
  }
}

/** Keep the first occurrence of each tag, in order. */
export function uniqueTags(tags: string[]): string[] {
  return [...new Set(tags)];
}
