import { isStorableText, type AssetSort, type SortOrder } from "@app/contracts";
import type { ReferenceKey } from "./asset-reference.ts";
import { ApiFailure } from "./errors.ts";

const MAX_CURSOR_LENGTH = 4096;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The opaque `next_cursor` of GET /api/assets: base64url JSON of the last record's sort value
 * and id, bound to the sort and order it was made for (as ComfyUI's cursors are), so replaying
 * it under another sort is refused instead of walking the wrong way.
 */
export function encodeCursor(sort: AssetSort, order: SortOrder, key: ReferenceKey): string {
  return Buffer.from(JSON.stringify({ s: sort, o: order, v: key.value, id: key.id })).toString("base64url");
}

export function decodeCursor(cursor: string, sort: AssetSort, order: SortOrder): ReferenceKey {
  const invalid = (why: string) => new ApiFailure("invalid_cursor", `after: ${why}; pass the next_cursor of the previous page unchanged`);
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid("not a cursor this service made");
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid("not a cursor this service made");
  }
  if (typeof payload !== "object" || payload === null) throw invalid("not a cursor this service made");
  const { s, o, v, id } = payload as Record<string, unknown>;
  if (s !== sort || o !== order) throw invalid(`made for sort=${String(s)}&order=${String(o)}, not sort=${sort}&order=${order}`);
  if (typeof id !== "string" || !UUID_RE.test(id)) throw invalid("not a cursor this service made");
  const numeric = sort === "size";
  // No stored value holds U+0000 or an unpaired surrogate; one forged into a cursor is refused before it reaches a query.
  if (numeric ? typeof v !== "number" || !Number.isSafeInteger(v) : typeof v !== "string" || v.length > 1024 || !isStorableText(v)) {
    throw invalid("not a cursor this service made");
  }
  return { value: v as string | number, id };
}

/** Record ids are lower-case UUIDs; any case is accepted, anything else names no record. */
export function normaliseAssetId(raw: string): string | null {
  const id = raw.toLowerCase();
  return UUID_RE.test(id) ? id : null;
}
