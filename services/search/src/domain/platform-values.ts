/**
 * `supported_os` / `supported_accelerator` values are paths whose levels are joined by ` :: `.
 * A node passes filter F when its list is empty, or (OS) holds "OS Independent", or holds a
 * value V such that V and F lie on one path (one is a level-prefix of the other).
 */

const SYNONYMS: Record<string, string[]> = {
  windows: ["microsoft", "windows"],
  linux: ["posix", "linux"],
  cuda: ["gpu", "nvidia cuda"],
  rocm: ["gpu", "amd rocm"],
  metal: ["gpu", "apple metal"],
};

/** Levels of a value, lower-cased, synonyms expanded (`Windows :: 11` → microsoft, windows, 11). */
export function platformLevels(value: string): string[] {
  let levels = value
    .split("::")
    .map((l) => l.trim().toLowerCase().replace(/\s+/g, " "))
    .filter(Boolean);
  // PyPI-style classifiers carry a category prefix that says nothing about the platform itself.
  if (levels[0] === "operating system" || levels[0] === "environment") levels = levels.slice(1);
  const head = levels[0];
  if (head !== undefined && SYNONYMS[head]) levels = [...SYNONYMS[head], ...levels.slice(1)];
  return levels;
}

export function platformKey(value: string): string {
  return platformLevels(value).join(" :: ");
}

export const OS_INDEPENDENT = "os independent";

function onOnePath(a: string[], b: string[]): boolean {
  const n = Math.min(a.length, b.length);
  if (n === 0) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function passesPlatformFilter(values: readonly string[] | undefined, filter: string, kind: "os" | "accelerator"): boolean {
  if (!values || values.length === 0) return true;
  const f = platformLevels(filter);
  if (f.length === 0) return true;
  for (const v of values) {
    const levels = platformLevels(v);
    if (kind === "os" && levels.join(" :: ") === OS_INDEPENDENT) return true;
    if (onOnePath(levels, f)) return true;
  }
  return false;
}
