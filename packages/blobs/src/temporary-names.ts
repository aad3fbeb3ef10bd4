import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/** The default of TEMP_MAX_AGE_MS: far longer than any request may stage for. */
export const DEFAULT_TEMP_MAX_AGE_MS = 60 * 60 * 1000;

const HOST = hostname().replace(/[^A-Za-z0-9.-]/g, "-") || "host";

/**
 * A temporary's name says who staged it (`<host>_<pid>_<random>`), so that a start-up sweep on a
 * store other processes share (replicas on one bucket or one DATA_DIR) can tell a crashed
 * process's leftovers from a live replica's upload in progress.
 */
export function temporaryName(pid = process.pid, host = HOST): string {
  return `${host}_${pid}_${randomBytes(12).toString("hex")}`;
}

/**
 * Whether the start-up sweep may remove a temporary (it runs before this process stages anything):
 * - older than `maxAgeMs`: no request stages for that long, so whoever wrote it is gone;
 * - staged on this host by a process that no longer exists (a crash before this start), or under
 *   this very pid (a container restarted in place gets the same pid again);
 * anything else may belong to another process that is still writing or about to commit it.
 * Names in another format (an older version's) go by age alone.
 */
export function isAbandoned(name: string, modifiedAtMs: number, nowMs: number, maxAgeMs: number): boolean {
  if (nowMs - modifiedAtMs >= maxAgeMs) return true;
  const m = /^([A-Za-z0-9.-]+)_(\d+)_[0-9a-f]+$/.exec(name);
  if (!m || m[1] !== HOST) return false;
  const pid = Number(m[2]);
  return pid === process.pid || !processExists(pid);
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
