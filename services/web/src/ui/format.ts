/**
 * Sizes in decimal units (as file managers and the ComfyUI frontend show them): whole bytes
 * below 1 kB, then three significant digits at most, so a small file never reads "0.0 kB".
 */
const UNITS = ["kB", "MB", "GB", "TB"] as const;
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "";
  if (bytes < 1000) return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  let value = bytes;
  let unit = -1;
  while (value >= 999.5 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  const digits = value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2;
  return `${Number(value.toFixed(digits))} ${UNITS[unit]}`;
}

/**
 * A file name as its stem and its extension, so a narrow card can shorten the stem (CSS
 * ellipsis) and keep the extension: "my-very-long-checkpoint….safetensors".
 */
export function splitName(name: string): { stem: string; ext: string } {
  const dot = name.lastIndexOf(".");
  if (dot <= 0 || name.length - dot > 16) return { stem: name, ext: "" };
  return { stem: name.slice(0, dot), ext: name.slice(dot) };
}

const dateFormat = new Intl.DateTimeFormat("en", { year: "numeric", month: "short", day: "numeric" });
export const formatDate = (iso?: string | null): string => (iso ? dateFormat.format(new Date(iso)) : "");

/** "5 minutes ago", "3 days ago": how old the catalog is, at a glance. */
export function timeAgo(iso: string, now = Date.now()): string {
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 45) return "just now";
  const steps: [number, string][] = [
    [60, "minute"],
    [3600, "hour"],
    [86400, "day"],
    [86400 * 30, "month"],
    [86400 * 365, "year"],
  ];
  let chosen = steps[0]!;
  for (const step of steps) if (seconds >= step[0] * 0.75) chosen = step;
  const n = Math.max(1, Math.round(seconds / chosen[0]));
  return `${n} ${chosen[1]}${n === 1 ? "" : "s"} ago`;
}

/** "in 5 minutes", "in 1 hour": when something comes, at a glance ("in a moment" under 45 s). */
export function timeUntil(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  if (!Number.isFinite(ms)) return "";
  if (ms < 45_000) return "in a moment";
  return `in ${timeAgo(new Date(now - ms).toISOString(), now).replace(/ ago$/, "")}`;
}

const clockFormat = new Intl.DateTimeFormat("en", { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
export const formatClock = (iso: string): string => clockFormat.format(new Date(iso));

export const countFormat = new Intl.NumberFormat("en");
