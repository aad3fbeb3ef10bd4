export { createApp, createSearchRoutes, type SearchAppDeps, type SearchRouterDeps, type SearchRoutes } from "./app.ts";
export { CatalogRefusedError, createSearchDeps, createSearchEngine, type ReindexOptions, type SearchDeps, type SearchDepsOptions, type ReindexResult } from "./compose.ts";
export type { CatalogStatus } from "./catalog-status.ts";
export { catalogRefreshMs, scheduleCatalogRefresh, CATALOG_REFRESH_SCHEDULE } from "./catalog-refresh.ts";
export type { SearchEngine, EngineQuery, EngineResult } from "./adapters/search-engine.ts";
export { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
export { parseSearchQuery, toEngineQuery } from "./domain/query.ts";
export { createReindexHandler, reindexJobId } from "./jobs/reindex-handler.ts";
export { catalogSource, loadCatalog, type CatalogSource } from "./adapters/catalog-source.ts";
