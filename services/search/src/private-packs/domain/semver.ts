/** SemVer 2.0 with a missing minor or patch allowed, as the registry's parser accepts (`1.2` is `1.2.0`); a leading `v` too. */
const SEMVER_RE = /^v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** The version in its normal form (`1.2` → `1.2.0`, `v1.0.0-rc.1` → `1.0.0-rc.1`), or null when it is not a version. */
export function normalizeVersion(raw: string): string | null {
  if (raw.length > 100) return null;
  const m = SEMVER_RE.exec(raw.trim());
  if (!m) return null;
  const core = `${m[1]}.${m[2] ?? 0}.${m[3] ?? 0}`;
  return core + (m[4] ? `-${m[4]}` : "") + (m[5] ? `+${m[5]}` : "");
}
