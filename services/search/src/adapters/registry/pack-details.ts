import { ComfyNode, NodeVersion, NODE_VERSION_PUBLIC_ALIASES } from "@app/contracts";
import { canonicalNames, dropNulls, type StoredNode } from "../../domain/catalog-record.ts";
import { installPathVersion } from "../../domain/versions.ts";
import { newestFirst } from "../../domain/versions.ts";
import { PermanentHttpError, type RegistryHttp } from "./http.ts";

/** Classes asked for per page, and the most pages read for one version. */
const CLASS_PAGE = 100;
const MAX_CLASS_PAGES = 50;

export interface PackDetails {
  /** Every version, newest `createdAt` first. */
  versions: NodeVersion[];
  /** The install-path version's class names, when that version has one. */
  classes?: string[];
  /** Those classes with their whole definitions, as the registry answers them. */
  definitions?: ComfyNode[];
}

/**
 * A pack's versions (`GET /nodes/{id}/versions`: every status, with download URLs; or `listed`,
 * already read from the registry's list of every version) and the class
 * names of its install-path version (`GET /nodes/{id}/versions/{v}/comfy-nodes`, page by page).
 * `known` are the classes already held for that version: a version's classes do not change
 * once extracted, so they are not asked for again. Undefined: the registry keeps the pack's
 * versions to itself (403 for a banned pack, 404 for one deleted meanwhile).
 */
export async function readPackDetails(
  http: RegistryHttp,
  id: string,
  known?: { version?: string; classes?: string[]; definitions?: ComfyNode[] },
  listed?: NodeVersion[],
): Promise<PackDetails | undefined> {
  const path = `/nodes/${encodeURIComponent(id)}`;
  let versions: NodeVersion[];
  if (listed) versions = [...listed].sort(newestFirst);
  else {
    let body: unknown;
    try {
      body = await http.get(`${path}/versions`);
    } catch (err) {
      if (err instanceof PermanentHttpError && (err.status === 403 || err.status === 404)) return undefined;
      throw err;
    }
    if (!Array.isArray(body)) throw new Error(`${http.base}${path}/versions: answer is not an array`);
    versions = body.flatMap((raw) => parseVersion(raw)).sort(newestFirst);
  }
  const install = installPathVersion(versions);
  if (!install) return { versions };
  if (known?.version === install.version && known?.classes?.length)
    return { versions, classes: known.classes, definitions: known.definitions };
  const definitions = (await readVersionClasses(http, id, install.version!)) ?? [];
  return { versions, classes: definitions.map((d) => d.comfy_node_name!), definitions };
}

/**
 * One version's classes with their definitions (`GET /nodes/{id}/versions/{v}/comfy-nodes`, page
 * by page), each name once. Undefined: the registry holds no class list for it (404: not
 * extracted yet).
 */
export async function readVersionClasses(http: RegistryHttp, id: string, version: string): Promise<ComfyNode[] | undefined> {
  const byName = new Map<string, ComfyNode>();
  for (let page = 1, pages = 1; page <= Math.min(pages, MAX_CLASS_PAGES); page++) {
    const q = `/nodes/${encodeURIComponent(id)}/versions/${encodeURIComponent(version)}/comfy-nodes?page=${page}&limit=${CLASS_PAGE}`;
    let b: { comfy_nodes?: unknown; totalNumberOfPages?: unknown };
    try {
      b = (await http.get(q)) as typeof b;
    } catch (err) {
      if (err instanceof PermanentHttpError && err.status === 404) return page === 1 ? undefined : [...byName.values()];
      throw err;
    }
    if (!Array.isArray(b?.comfy_nodes)) throw new Error(`${http.base}${q}: answer has no comfy_nodes array`);
    for (const c of b.comfy_nodes) {
      const node = parseComfyNode(c);
      if (node && !byName.has(node.comfy_node_name!)) byName.set(node.comfy_node_name!, node);
    }
    pages = Number.isInteger(b.totalNumberOfPages) ? (b.totalNumberOfPages as number) : 1;
  }
  return [...byName.values()];
}

/** A class with its definition in the registry's words; none without a name. Fields that do not parse are dropped. */
function parseComfyNode(raw: unknown): ComfyNode | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const o = dropNulls(raw) as Record<string, unknown>;
  if (typeof o.comfy_node_name !== "string" || o.comfy_node_name === "") return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, field] of Object.entries(ComfyNode.shape)) if (o[k] !== undefined && field.safeParse(o[k]).success) out[k] = o[k];
  return out;
}

/** One version of a registry answer in our names, or none when it does not parse. */
export function parseVersion(raw: unknown): NodeVersion[] {
  if (!raw || typeof raw !== "object") return [];
  const o = dropNulls(raw) as Record<string, unknown>;
  canonicalNames(o, NODE_VERSION_PUBLIC_ALIASES);
  const parsed = NodeVersion.safeParse(o);
  return parsed.success ? [parsed.data] : [];
}

/**
 * A listed pack with what is known of its versions and classes: the install-path version
 * becomes its `latest_version` (with its download URL), and `app_node_names` that version's
 * classes. Without details the pack keeps what the list said.
 */
export function withDetails(listed: StoredNode, d: PackDetails | undefined): StoredNode {
  if (!d) return listed;
  const install = installPathVersion(d.versions);
  const out: StoredNode = { ...listed, versions: d.versions };
  if (install) {
    out.latest_version = install;
    out.app_node_names = d.classes ?? [];
    out.app_node_names_version = install.version;
    if (d.definitions?.length) out.app_nodes = d.definitions;
  }
  return out;
}

/** A pack as the list gives it: what earlier details added is taken off before new ones go on. */
export function withoutDetails(r: StoredNode): StoredNode {
  const { versions: _v, app_node_names: _n, app_node_names_version: _nv, app_nodes: _d, ...rest } = r;
  return rest;
}

/** The details a stored pack already carries, to keep while the registry is not asked again. */
export function detailsOf(r: StoredNode | undefined): PackDetails | undefined {
  if (!r?.versions) return undefined;
  return {
    versions: r.versions,
    classes: r.app_node_names_version !== undefined ? (r.app_node_names ?? []) : undefined,
    definitions: r.app_nodes,
  };
}

/**
 * Whether a pack's list entry says its versions may have changed since `previous` was read: a
 * new pack, a newest version that differs (a new one, or its status changed), or no details yet.
 */
export function detailsStale(listed: StoredNode, previous: StoredNode | undefined): boolean {
  if (!previous?.versions) return true;
  const a = listed.latest_version;
  const b = previous.versions[0];
  return a?.version !== b?.version || a?.status !== b?.status || a?.createdAt !== b?.createdAt;
}
