export { createApp, createSearchRoutes, searchReadyDetails, type SearchAppDeps, type SearchRouterDeps, type SearchRoutes } from "./app.ts";
export { createArchiveService, catalogVersionOf, type ArchiveService, type ArchivesStatus } from "./adapters/archives/archive-service.ts";
export { withBundleImported } from "./adapters/bundle/bundle-source.ts";
export { createSearchEngine, createSearchRuntime, type SearchRuntime, type SearchRuntimeOptions } from "./compose.ts";
export type { ReindexOptions, ReindexResult } from "./catalog/reindex.ts";
export { CatalogRefusedError, type CatalogStatus } from "./catalog/catalog-status.ts";
export { catalogRefreshMs, scheduleCatalogRefresh, CATALOG_REFRESH_SCHEDULE } from "./catalog/catalog-refresh.ts";
export type { SearchEngine, EngineQuery, EngineResult } from "./adapters/search-engine.ts";
export { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
export { parseSearchQuery, toEngineQuery } from "./domain/query.ts";
export { createReindexHandler, reindexJobId } from "./jobs/reindex-handler.ts";
export { searchJobs } from "./jobs/search-jobs.ts";
export { catalogSource, loadCatalog, type CatalogSource } from "./adapters/catalog-source.ts";
// What a gateway mounts or proxies here, and answers when it cannot reach this service (upload exports the same two names).
export { SEARCH_PATHS as routePrefixes } from "./routes/paths.ts";
export { unavailableBody } from "./routes/errors.ts";
export { applyRegistryCors } from "./routes/cors.ts";
export { openPrivatePacks, type PrivatePacks } from "./private-packs/index.ts";
