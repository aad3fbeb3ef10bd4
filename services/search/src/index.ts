export { createApp, createRouter, type SearchAppDeps, type SearchRouterDeps } from "./app.ts";
export { createSearchDeps, createSearchEngine, type SearchDeps, type SearchDepsOptions, type ReindexResult } from "./compose.ts";
export type { SearchEngine, EngineQuery, EngineResult } from "./adapters/search-engine.ts";
export { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
export { parseSearchQuery, toEngineQuery } from "./domain/query.ts";
export { createReindexHandler, reindexJobId } from "./jobs/reindex-handler.ts";
export { catalogSource, loadCatalog, type CatalogSource } from "./adapters/catalog-source.ts";
