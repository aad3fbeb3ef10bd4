import { z } from "zod";
import { HASH_RE } from "./hash.ts";

/**
 * The sidecar: the JSON record a store keeps beside each blob (`<hash>.json`), what the bytes
 * are, whatever names them. `hash` is the blake3 hex of the bytes; `tags` hold upload types,
 * `mask`/`derived`, and `original:<hash>` / `mask:<hash>` links for derivatives. No wire type:
 * clients see asset references (the asset API) and names (`<hash>.<ext>`), never this.
 */
export const Sidecar = z.object({
  hash: z.string().regex(HASH_RE),
  ext: z.string(),
  size: z.number().int().nonnegative(),
  mime: z.string(),
  /** Images only: a model, video or text file stored through the asset API has no dimensions. */
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
  first_uploaded_at: z.iso.datetime(),
  last_uploaded_at: z.iso.datetime(),
  tags: z.array(z.string()),
});

export type Sidecar = z.infer<typeof Sidecar>;

/** Tags a sidecar keeps; past this, new upload types are not added (a client cannot grow a sidecar without bound). */
export const MAX_SIDECAR_TAGS = 64;

/** What a commit says of its bytes; mergeSidecar adds the timestamps. */
export interface NewContent {
  hash: string;
  ext: string;
  size: number;
  mime: string;
  /** Images only. */
  width?: number;
  height?: number;
  tags: string[];
}

/** First upload creates the sidecar; every later one only adds tags and moves `last_uploaded_at`. */
export function mergeSidecar(existing: Sidecar | null, incoming: NewContent, now: Date = new Date()): Sidecar {
  const at = now.toISOString();
  if (!existing) {
    const { width, height, ...rest } = incoming;
    return {
      ...rest,
      ...(width && height && { width, height }),
      tags: dedupe(incoming.tags).slice(0, MAX_SIDECAR_TAGS),
      first_uploaded_at: at,
      last_uploaded_at: at,
    };
  }
  const tags = [...existing.tags];
  for (const t of incoming.tags) {
    if (!tags.includes(t) && tags.length < MAX_SIDECAR_TAGS) tags.push(t);
  }
  return { ...existing, tags, last_uploaded_at: at };
}

function dedupe(tags: string[]): string[] {
  return [...new Set(tags)];
}
