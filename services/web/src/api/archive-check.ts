/**
 * Whether this instance can hand out a version's archive now, asked with HEAD on its own
 * archive route (services/search `routes/archives.ts`): 200 when it holds the archive (or has
 * just fetched it from upstream), 503 when it holds none and upstream cannot give it now, 404
 * when there is none to give. Only this instance's own `/archives/` URLs are asked; a link to
 * upstream (MIRROR_ARCHIVES=off) is not this page's to check.
 */
export type ArchiveState = "available" | "unavailable" | "missing" | "unknown";

export function isOwnArchive(url: string | undefined): url is string {
  if (!url) return false;
  try {
    const u = new URL(url, location.href);
    return u.origin === location.origin && u.pathname.startsWith("/archives/");
  } catch {
    return false;
  }
}

export async function checkArchive(url: string, signal?: AbortSignal): Promise<ArchiveState> {
  if (!isOwnArchive(url)) return "unknown";
  const res = await fetch(url, { method: "HEAD", signal });
  if (res.ok) return "available";
  if (res.status === 503) return "unavailable";
  if (res.status === 404) return "missing";
  return "unknown";
}

/** What the page says of an archive it cannot hand out, where its download and install are offered. */
export function archiveProblem(state: ArchiveState, version: string): string | null {
  if (state === "unavailable")
    return `The archive of ${version} is not held here, and its upstream cannot be reached now: installing or downloading it fails until it can.`;
  if (state === "missing") return `No archive of ${version} is published: it cannot be installed or downloaded.`;
  return null;
}
