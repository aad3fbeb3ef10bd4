import { createHash } from "node:crypto";
import { NODE_VERSION_PUBLIC_ALIASES, type NodeVersion, type VersionStatus } from "@app/contracts";
import type { StoredNode } from "./catalog-record.ts";

/**
 * A pack's versions as the registry's read routes answer them, from what the catalog holds.
 *
 * A record may carry `versions` (every version, newest `createdAt` first: a mirror fills them, a
 * file may) or only `latest_version`; then that one version is all the catalog knows, and every
 * route answers from it alone.
 */

/** The statuses the registry's install path takes its latest version from (registry-backend GetLatestNodeVersion). */
export const INSTALLABLE: ReadonlySet<VersionStatus> = new Set([
  "NodeVersionStatusActive",
  "NodeVersionStatusFlagged",
  "NodeVersionStatusPending",
]);

const cache = new WeakMap<StoredNode, NodeVersion[]>();

/** Every known version of the pack, in the API's shape, newest first. Computed once per record. */
export function versionsOf(r: StoredNode): NodeVersion[] {
  let list = cache.get(r);
  if (list) return list;
  const raw = r.versions && r.versions.length > 0 ? r.versions : r.latest_version?.version ? [r.latest_version] : [];
  // The shared model keeps them newest first; a hand-written file may not, so the order is made here.
  list = raw
    .filter((v) => v.version)
    .map((v) => toApiVersion(r.id, v))
    .sort(newestFirst);
  cache.set(r, list);
  return list;
}

/** Newest `createdAt` first, unknown dates last; equals keep their order (sorts are stable). */
export function newestFirst(a: NodeVersion, b: NodeVersion): number {
  const x = a.createdAt ? Date.parse(a.createdAt) : Number.NEGATIVE_INFINITY;
  const y = b.createdAt ? Date.parse(b.createdAt) : Number.NEGATIVE_INFINITY;
  return x === y ? 0 : x > y ? -1 : 1;
}

const installCache = new WeakMap<StoredNode, NodeVersion | null>();

/**
 * The version `/nodes/{id}/install` answers without `?version=`, and the `latest_version` every
 * route answers with the pack: the record's `latest_version` (the install-path version, by the
 * shared model) when its status is installable, else the install-path rule over what it lists.
 * None when no version is active, flagged or pending (every one deleted or banned): the registry
 * then answers the install 404 and the pack with no `latest_version` (`GetLatestNodeVersion`
 * returns nil).
 */
export function installVersion(r: StoredNode): NodeVersion | undefined {
  const hit = installCache.get(r);
  if (hit !== undefined) return hit ?? undefined;
  const all = versionsOf(r);
  const latest = r.latest_version;
  let found: NodeVersion | undefined;
  if (latest?.version && installable(latest)) found = all.find((v) => v.version === latest.version) ?? toApiVersion(r.id, latest);
  else found = installPathVersion(all);
  installCache.set(r, found ?? null);
  return found;
}

/** A version the install path may take; one with no status (a hand-written file) counts as active. */
function installable(v: NodeVersion): boolean {
  return !v.status || INSTALLABLE.has(v.status);
}

/**
 * The registry's install-path version (registry-backend GetLatestNodeVersion): of the versions
 * whose status is active, flagged or pending, the first by the version column descending. That
 * column is text, so the registry installs 1.9.0 before 1.10.0, and so does a faithful mirror.
 * Not the list's `latest_version`, which is the newest by creation time whatever its status.
 */
export function installPathVersion(versions: readonly NodeVersion[]): NodeVersion | undefined {
  let best: NodeVersion | undefined;
  for (const v of versions) {
    if (!v.version || !installable(v)) continue;
    if (!best || v.version > best.version!) best = v;
  }
  return best;
}

/** One version by its number, whatever its status (the registry answers a named version as it is). */
export function versionNamed(r: StoredNode, version: string): NodeVersion | undefined {
  return versionsOf(r).find((v) => v.version === version);
}

/** The version whose node classes `app_node_names` holds (the install-path version when the catalog does not say). */
export function classesVersion(r: StoredNode): string | undefined {
  return r.app_node_names_version ?? r.latest_version?.version ?? installVersion(r)?.version;
}

export interface VersionFilter {
  statuses?: ReadonlySet<VersionStatus>;
  /** Case-insensitive substring of `status_reason`. */
  statusReason?: string;
  /** The registry leaves `status_reason` out of its version lists unless asked. */
  includeStatusReason: boolean;
}

export function filterVersions(list: readonly NodeVersion[], f: VersionFilter): NodeVersion[] {
  const reason = f.statusReason?.toLowerCase();
  const out: NodeVersion[] = [];
  for (const v of list) {
    if (f.statuses && !(v.status !== undefined && f.statuses.has(v.status))) continue;
    if (reason !== undefined && !(v.status_reason ?? "").toLowerCase().includes(reason)) continue;
    if (f.includeStatusReason || v.status_reason === undefined) out.push(v);
    else {
      const { status_reason: _drop, ...rest } = v;
      out.push(rest);
    }
  }
  return out;
}

/**
 * A version as the API answers it: `node_id` set, the public name of a renamed field beside ours,
 * an `id` and a `changelog`, which the registry always answers and its clients index without a
 * default (`api_node_version["id"]` in ComfyUI-Manager and comfy-cli, `x['changelog']` in
 * ComfyUI-Manager's `show-versions`). A catalog without an id gets a stable name-based UUID (v5
 * layout, SHA-1 of `<node id>@<version>`), the same on every start; without a changelog, "".
 */
export function toApiVersion(nodeId: string, v: NodeVersion): NodeVersion {
  const out: Record<string, unknown> = { ...v, node_id: v.node_id ?? nodeId, changelog: v.changelog ?? "" };
  for (const [ours, theirs] of Object.entries(NODE_VERSION_PUBLIC_ALIASES)) {
    if (out[ours] !== undefined) out[theirs] = out[ours];
  }
  if (!out.id && v.version) out.id = versionUuid(nodeId, v.version);
  return out;
}

function versionUuid(nodeId: string, version: string): string {
  const h = createHash("sha1").update(`${nodeId}@${version}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
