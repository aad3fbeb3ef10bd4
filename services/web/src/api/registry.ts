import type { ComfyNodesPage, Node, NodeVersion, SearchPage } from "@app/contracts";
import { getJson } from "./http.ts";

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

/** The node classes of one version, on one page as large as the ComfyUI frontend asks for (the route pages by 10 unless told). */
export function getComfyNodes(id: string, version: string, signal: AbortSignal): Promise<ComfyNodesPage> {
  return getJson<ComfyNodesPage>(`/nodes/${encodeURIComponent(id)}/versions/${encodeURIComponent(version)}/comfy-nodes?limit=8192`, { signal });
}

/** Every version of a pack the catalog knows, newest first (all statuses). */
export function getVersions(id: string, signal: AbortSignal): Promise<NodeVersion[]> {
  return getJson<NodeVersion[]>(`/nodes/${encodeURIComponent(id)}/versions`, { signal });
}
