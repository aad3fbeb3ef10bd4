import { CatalogRecord, NODE_PUBLIC_ALIASES, NODE_VERSION_PUBLIC_ALIASES } from "@app/contracts";

export type StoredNode = CatalogRecord;

export function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== null).map(dropNulls);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = dropNulls(x);
    return out;
  }
  return v;
}

/** Public registry names load into ours; our name wins when a record carries both. */
export function canonicalNames(o: Record<string, unknown>, aliases: Record<string, string>): void {
  for (const [ours, theirs] of Object.entries(aliases)) {
    if (o[ours] === undefined && o[theirs] !== undefined) o[ours] = o[theirs];
    delete o[theirs];
  }
}

export type ParsedRecord = { ok: true; record: StoredNode } | { ok: false; reason: string };

/**
 * Validate one raw catalog record: nulls dropped, public field names accepted, unknown keys
 * dropped, the rest checked against the contracts schema. Never throws.
 */
export function parseCatalogRecord(raw: unknown): ParsedRecord {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, reason: "not a JSON object" };
  const o = dropNulls(raw) as Record<string, unknown>;
  canonicalNames(o, NODE_PUBLIC_ALIASES);
  const lv = o.latest_version;
  if (lv && typeof lv === "object" && !Array.isArray(lv)) canonicalNames(lv as Record<string, unknown>, NODE_VERSION_PUBLIC_ALIASES);
  if (Array.isArray(o.versions))
    for (const v of o.versions) if (v && typeof v === "object") canonicalNames(v as Record<string, unknown>, NODE_VERSION_PUBLIC_ALIASES);
  const parsed = CatalogRecord.safeParse(o);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "record";
    return { ok: false, reason: `${where}: ${issue?.message ?? "invalid"}` };
  }
  return { ok: true, record: parsed.data };
}
