import type { NodeVersion } from "@app/contracts";

/** The version statuses the registry's install path takes (registry-backend `GetLatestNodeVersion`). */
const INSTALLABLE = new Set<NodeVersion["status"]>(["NodeVersionStatusActive", "NodeVersionStatusFlagged", "NodeVersionStatusPending"]);

/**
 * Version numbers in order: numeric parts as numbers (1.10.0 above 1.9.0), anything else as
 * text. registry-backend orders by the version column, which gives the same answer whenever
 * the parts compared have the same number of digits.
 */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/);
  const pb = b.split(/[.+-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "";
    const y = pb[i] ?? "";
    const d = /^\d+$/.test(x) && /^\d+$/.test(y) ? Number(x) - Number(y) : x < y ? -1 : x > y ? 1 : 0;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The version `GET /nodes/{id}/install` answers without `?version=`: the highest version whose
 * status is active, flagged or pending. Not the list's `latest_version`, which is the newest by
 * creation time whatever its status.
 */
export function installPathVersion(versions: readonly NodeVersion[]): NodeVersion | undefined {
  let best: NodeVersion | undefined;
  for (const v of versions) {
    if (!v.version || !INSTALLABLE.has(v.status)) continue;
    if (!best || compareVersions(v.version, best.version!) > 0) best = v;
  }
  return best;
}

/** Newest `createdAt` first, as the catalog keeps a pack's versions. */
export function newestFirst(versions: readonly NodeVersion[]): NodeVersion[] {
  return [...versions].sort((a, b) => (Date.parse(b.createdAt ?? "") || 0) - (Date.parse(a.createdAt ?? "") || 0));
}
