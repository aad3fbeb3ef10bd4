import type { Express, Router } from "express";
import { createServiceApp, type Logger } from "@app/platform";
import type { SearchEngine } from "./adapters/search-engine.ts";
import type { CatalogStatus } from "./catalog-status.ts";
import { nodesRoutes } from "./routes/nodes.ts";
import { SearchErrorCode, searchErrorHandler } from "./routes/errors.ts";
import { registerMemoMetrics } from "./memo-metrics.ts";

export interface SearchRouterDeps {
  engine: SearchEngine;
  logger: Logger;
}

export interface SearchAppDeps extends SearchRouterDeps {
  /** True once start-up's local part is over (snapshot restored, a file source indexed); never waits on the network. */
  isReady(): boolean;
  /** The catalog's state for /readyz: fresh, stale or empty, and why. */
  catalogStatus?(): CatalogStatus;
}

/** The search routes and their own error handling, with no catch-all: a gateway can mount several routers. */
export function createRouter(deps: SearchRouterDeps): Router {
  registerMemoMetrics();
  const router = nodesRoutes(deps.engine);
  router.use(searchErrorHandler(deps.logger));
  return router;
}

/** The standalone search service: router + health, readiness, metrics, 404 and error shape. */
export function createApp(deps: SearchAppDeps): Express {
  return createServiceApp({
    name: "search",
    logger: deps.logger,
    router: createRouter(deps),
    isReady: () => deps.isReady(),
    notReadyBody: { error: "not_ready", message: "the catalog is still being indexed" },
    readyDetails: () => (deps.catalogStatus ? { catalog: deps.catalogStatus() } : {}),
    notFoundBody: (req) => ({ error: SearchErrorCode.notFound, message: `no route ${req.method} ${req.path.slice(0, 200)}` }),
    errorHandler: searchErrorHandler(deps.logger),
  });
}
