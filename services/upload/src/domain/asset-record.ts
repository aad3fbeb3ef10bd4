import type { AssetRecord } from "@app/contracts";

/** Tags kept per asset; past this, new upload types are not added (a client cannot grow a record without bound). */
export const MAX_TAGS = 64;

export interface NewAsset {
  hash: string;
  ext: string;
  size: number;
  mime: string;
  /** Images only. */
  width?: number;
  height?: number;
  tags: string[];
}

/** First upload creates the record; every later one only adds tags and moves `last_uploaded_at`. */
export function mergeRecord(existing: AssetRecord | null, incoming: NewAsset, now: Date = new Date()): AssetRecord {
  const at = now.toISOString();
  if (!existing) {
    const { width, height, ...rest } = incoming;
    return { ...rest, ...(width && height && { width, height }), tags: dedupe(incoming.tags).slice(0, MAX_TAGS), first_uploaded_at: at, last_uploaded_at: at };
  }
  const tags = [...existing.tags];
  for (const t of incoming.tags) {
    if (!tags.includes(t) && tags.length < MAX_TAGS) tags.push(t);
  }
  return { ...existing, tags, last_uploaded_at: at };
}

function dedupe(tags: string[]): string[] {
  return [...new Set(tags)];
}
