/**
 * The path prefixes the search service answers (matched at a segment boundary): the gateway
 * routes these here, mounted or proxied, and the registry's CORS applies under each.
 */
export const SEARCH_PATHS: readonly string[] = [
  "/nodes",
  "/versions",
  "/comfy-nodes",
  "/bulk/nodes",
  "/publishers",
  "/channel",
  "/archives",
  "/admin/nodes",
];
