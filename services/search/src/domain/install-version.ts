import type { NodeVersion } from "@app/contracts";
import { INSTALLABLE } from "./versions.ts";

/**
 * The version `GET /nodes/{id}/install` answers without `?version=`: of the versions whose status
 * is active, flagged or pending, the first by the version column descending. That column is text,
 * so the registry installs 1.9.0 before 1.10.0, and so does a faithful mirror. Not the list's
 * `latest_version`, which is the newest by creation time whatever its status.
 */
export function installPathVersion(versions: readonly NodeVersion[]): NodeVersion | undefined {
  let best: NodeVersion | undefined;
  for (const v of versions) {
    if (!v.version || !v.status || !INSTALLABLE.has(v.status)) continue;
    if (!best || v.version > best.version!) best = v;
  }
  return best;
}
