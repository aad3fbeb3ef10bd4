import { createHash } from "node:crypto";

/**
 * `metadata_filter` is answered from an index of each record's `user_metadata`, one row per
 * top-level key and value (per element when the value is a list), so a filtered page is an
 * indexed lookup on both databases rather than a scan of every record's JSON.
 *
 * A row holds a digest (not the value): bounded in size whatever the value, and equality of
 * digests is equality of canonical JSON, so matching is type-strict as ComfyUI's is (1, "1"
 * and true differ; objects compare by content, key order aside).
 */

/** Keys a `metadata_filter` may name, and values a list in it may hold. */
export const MAX_FILTER_KEYS = 16;
export const MAX_FILTER_VALUES = 64;

/** JSON with object keys sorted: equal values give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const digest = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 32);

/** The row saying "this key holds a value other than null". */
export const presentEntry = (key: string): string => digest(JSON.stringify([key]));
/** The row saying "this key holds (or its list contains) this value". */
export const valueEntry = (key: string, value: unknown): string => digest(`${JSON.stringify(key)}\u0000${canonical(value)}`);

/** A record's index rows. */
export function metadataEntries(metadata: Record<string, unknown>): string[] {
  const entries = new Set<string>();
  for (const [key, value] of Object.entries(metadata)) {
    const values = (Array.isArray(value) ? value : [value]).filter((v) => v !== null);
    if (values.length === 0) continue;
    entries.add(presentEntry(key));
    for (const v of values) entries.add(valueEntry(key, v));
  }
  return [...entries];
}

/**
 * One key of a filter: the record matches when it holds any of `anyOf`, or, when `orMissing`
 * is set, when the key is absent or null (a filter value of null, or a list containing null).
 */
export interface MetadataCondition {
  anyOf: string[];
  orMissing: string | null;
}

export class MetadataFilterError extends Error {}

/** The conditions of a parsed `metadata_filter` object (every key must match). */
export function metadataConditions(filter: Record<string, unknown>): MetadataCondition[] {
  const keys = Object.keys(filter);
  if (keys.length > MAX_FILTER_KEYS) throw new MetadataFilterError(`names ${keys.length} keys; at most ${MAX_FILTER_KEYS}`);
  return keys.map((key) => {
    const value = filter[key];
    const options = Array.isArray(value) ? value : [value];
    if (options.length > MAX_FILTER_VALUES)
      throw new MetadataFilterError(`'${key.slice(0, 64)}' lists ${options.length} values; at most ${MAX_FILTER_VALUES}`);
    const concrete = [...new Set(options.filter((v) => v !== null).map((v) => valueEntry(key, v)))];
    return { anyOf: concrete, orMissing: options.some((v) => v === null) ? presentEntry(key) : null };
  });
}
