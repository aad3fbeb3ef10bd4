// What the processes that host search use: the service, its standalone app, and the worker's refresh schedule.
export { createSearchService, type SearchService } from "./service.ts";
export type { SearchServiceOptions } from "./service.ts";
export type { KeyVerifier } from "./private-packs/http/key-access.ts";
export { createSearchApp } from "./app.ts";
export { scheduleCatalogRefresh } from "./catalog/catalog-refresh.ts";
// What a gateway mounts or proxies here, and answers when it cannot reach this service (upload exports the same two names).
export { SEARCH_PATHS as routePrefixes } from "./routes/paths.ts";
export { unavailableBody } from "./routes/errors.ts";
export { applyRegistryCors } from "./routes/cors.ts";
