import { MAX_TAG_LENGTH } from "@app/contracts";

/** What the asset reference an upload makes says: one per bytes, route, type and subfolder. */
export interface ReferenceFields {
  /** The key's principal the reference belongs to. */
  owner: string;
  /**
   * Which upload made it (`upload:<type>:<subfolder>`, `mask:…`, `derived:…`): a re-upload finds
   * its reference again. None (the asset API's POST): every upload makes a reference of its own.
   */
  origin?: string;
  tags: string[];
  /** The reference's name (default `<hash>.<ext>`). */
  name?: string;
  userMetadata?: Record<string, unknown>;
  systemMetadata?: Record<string, unknown>;
  previewId?: string;
}

/** What the bytes are, as their sidecar keeps it (an image probe, or the asset API's content probe). */
export interface StoredContent {
  ext: string;
  mime: string;
  width?: number;
  height?: number;
}

/** The upload's tags as the asset API keeps them (trimmed, lower-case, no empty or over-long one). */
export function uploadTags(...tags: string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t.length > 0 && t.length <= MAX_TAG_LENGTH))];
}

export const uploadOrigin = (route: "upload" | "mask" | "derived", type: string, subfolder: string): string =>
  `${route}:${type}:${subfolder}`;
