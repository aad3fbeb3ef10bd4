// The parts benches and other packages' tests reach below the service (`@app/search/internal`); not for the processes that host search.
export { createApp } from "./app.ts";
export { createSearchRuntime, type SearchRuntime } from "./compose.ts";
export { catalogVersionOf, createArchiveService } from "./adapters/archives/archive-service.ts";
export { loadCatalog } from "./adapters/catalog-source.ts";
export { createReindexHandler } from "./jobs/reindex-handler.ts";
export type { SearchEngine, EngineQuery } from "./ports/search-engine.ts";
export type { EngineResult } from "./domain/engine-query.ts";
export { resultPage, toPage } from "./fast/node-output.ts";
export { EmbeddedSearchEngine } from "./adapters/embedded/embedded-engine.ts";
export { buildIndex } from "./adapters/embedded/build-index.ts";
export { IndexSearcher } from "./adapters/embedded/search-index.ts";
export { DEFAULT_WEIGHTS, type RankingWeights } from "./domain/ranking.ts";
export { parseSearchQuery, toEngineQuery } from "./domain/query.ts";
export { BoundedMemo } from "./fast/bounded-memo.ts";
export type { CatalogStatus } from "./catalog/catalog-status.ts";
