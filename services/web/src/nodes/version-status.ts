import type { NodeVersion } from "@app/contracts";

/**
 * The statuses the registry's install path takes (registry-backend GetLatestNodeVersion: active,
 * flagged, pending). A banned or deleted version is never offered: no command, no download.
 */
const INSTALLABLE = new Set<NodeVersion["status"]>(["NodeVersionStatusActive", "NodeVersionStatusFlagged", "NodeVersionStatusPending"]);

/** A version with no status is taken as the registry takes it: installable. */
export const isInstallable = (v: Pick<NodeVersion, "status">): boolean => v.status === undefined || INSTALLABLE.has(v.status);

export const statusWord = (status?: string): string => (status ? status.replace(/^NodeVersionStatus|^NodeStatus/, "").toLowerCase() : "");

/** Green for active, red for banned or deleted, amber for the rest (pending, flagged). */
export function statusTone(status?: string): "ok" | "danger" | "" {
  const word = statusWord(status);
  return word === "active" ? "ok" : word === "banned" || word === "deleted" ? "danger" : "";
}
