import type { Node, NodeVersion, SearchPage } from "@app/contracts";
import type { ComfyNodeDefinition } from "../nodes/class-definition.ts";
import { ApiError, getJson } from "./http.ts";

/** The parameters of GET /nodes/search this page sends (names as the API spells them). */
export interface SearchParams {
  search?: string;
  app_node_search?: string;
  repository_url_search?: string;
  supported_os?: string;
  supported_accelerator?: string;
  include_banned?: boolean;
  page: number;
  limit: number;
}

export function searchUrl(p: SearchParams): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined || v === "" || v === false) continue;
    q.set(k, String(v));
  }
  return `/nodes/search?${q}`;
}

export const searchNodes = (p: SearchParams, signal: AbortSignal): Promise<SearchPage> => getJson<SearchPage>(searchUrl(p), { signal });

export function getNode(id: string, includeBanned: boolean, signal: AbortSignal): Promise<Node> {
  return getJson<Node>(`/nodes/${encodeURIComponent(id)}${includeBanned ? "?include_banned=true" : ""}`, { signal });
}

/** Every version of a pack the catalog knows, newest first (all statuses), with the registry's reason for a banned or deleted one. */
export function getVersions(id: string, signal: AbortSignal): Promise<NodeVersion[]> {
  return getJson<NodeVersion[]>(`/nodes/${encodeURIComponent(id)}/versions?include_status_reason=true`, { signal });
}

/**
 * GET /nodes/{id} as a person means it: a banned pack is answered (the registry answers 403
 * `Node Banned`, or 404 as an older server does) so its page can say it is banned, through
 * `include_banned=true`; a pack that is not there at all keeps the first refusal.
 */
export async function getNodeForPage(id: string, signal: AbortSignal): Promise<Node> {
  try {
    return await getNode(id, false, signal);
  } catch (first) {
    if (!(first instanceof ApiError) || (first.status !== 403 && first.status !== 404)) throw first;
    try {
      return await getNode(id, true, signal);
    } catch {
      throw first;
    }
  }
}

/**
 * The version `comfy node registry-install <id>` (and ComfyUI-Manager) would take: the
 * registry's own `/nodes/{id}/install`. Null when it has none (404), the pack is banned (403),
 * or what it answers is deleted or banned (an older server answered those too).
 */
export async function getInstallVersion(id: string, signal: AbortSignal): Promise<NodeVersion | null> {
  try {
    const v = await getJson<NodeVersion>(`/nodes/${encodeURIComponent(id)}/install`, { signal });
    return v.status === "NodeVersionStatusDeleted" || v.status === "NodeVersionStatusBanned" ? null : v;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 403)) return null;
    throw err;
  }
}

/** The classes of one version with their definitions where the server has them (names only on an older one). */
export function getClassDefinitions(
  id: string,
  version: string,
  includeBanned: boolean,
  signal: AbortSignal,
): Promise<{ comfy_nodes: ComfyNodeDefinition[] }> {
  return getJson(
    `/nodes/${encodeURIComponent(id)}/versions/${encodeURIComponent(version)}/comfy-nodes?limit=8192${includeBanned ? "&include_banned=true" : ""}`,
    { signal },
  );
}
