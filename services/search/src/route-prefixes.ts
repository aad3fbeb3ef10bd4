import { SearchErrorCode } from "./routes/errors.ts";

/**
 * The path prefixes the search service answers (matched at a segment boundary): the search and
 * list routes and the registry's other read routes. A gateway mounts or proxies exactly these.
 */
export const routePrefixes: readonly string[] = ["/nodes", "/versions", "/comfy-nodes", "/bulk/nodes", "/publishers"];

/** What a client of these routes gets when the service cannot be reached, in the search shape. */
export const unavailableBody = (message: string) => ({ error: SearchErrorCode.unavailable, message });
