/** SemVer 2.0 with a missing minor or patch allowed, as the registry's parser accepts (`1.2` is `1.2.0`); a leading `v` too. */
const SEMVER_RE =
  /^v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** The version in its normal form (`1.2` → `1.2.0`, `v1.0.0-rc.1` → `1.0.0-rc.1`), or null when it is not a version. */
export function normalizeVersion(raw: string): string | null {
  if (raw.length > 100) return null;
  const m = SEMVER_RE.exec(raw.trim());
  if (!m) return null;
  const core = `${m[1]}.${m[2] ?? 0}.${m[3] ?? 0}`;
  return core + (m[4] ? `-${m[4]}` : "") + (m[5] ? `+${m[5]}` : "");
}

/** SemVer precedence of two normal-form versions: numbers as numbers, a pre-release before its release. */
export function compareVersions(a: string, b: string): number {
  const [ca = "", pa] = splitBuild(a);
  const [cb = "", pb] = splitBuild(b);
  const na = ca.split(".").map(Number);
  const nb = cb.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (na[i] !== nb[i]) return (na[i] ?? 0) - (nb[i] ?? 0);
  if (pa === pb) return 0;
  if (pa === undefined) return 1;
  if (pb === undefined) return -1;
  const xa = pa.split(".");
  const xb = pb.split(".");
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    const x = xa[i];
    const y = xb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny && Number(x) !== Number(y)) return Number(x) - Number(y);
    if (nx !== ny) return nx ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** The core and the pre-release of a version; build metadata has no precedence. */
function splitBuild(v: string): [string | undefined, string | undefined] {
  const noBuild = v.split("+")[0]!;
  const dash = noBuild.indexOf("-");
  return dash === -1 ? [noBuild, undefined] : [noBuild.slice(0, dash), noBuild.slice(dash + 1)];
}
