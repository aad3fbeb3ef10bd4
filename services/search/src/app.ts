import express, { Router, type Express } from "express";
import { httpMetrics, metricsHandler, requestId, type Logger } from "@app/platform";
import type { SearchEngine } from "./adapters/search-engine.ts";
import { nodesRoutes } from "./routes/nodes.ts";
import { SearchErrorCode, searchErrorHandler, sendError } from "./routes/errors.ts";

export interface SearchRouterDeps {
  engine: SearchEngine;
  logger: Logger;
}

export interface SearchAppDeps extends SearchRouterDeps {
  /** True once the catalog is indexed (or at once when there is none). */
  isReady(): boolean;
}

/** The search routes and their own error handling, with no catch-all: a gateway can mount several routers. */
export function createRouter(deps: SearchRouterDeps): Router {
  const router = Router();
  router.use(nodesRoutes(deps.engine));
  router.use(searchErrorHandler(deps.logger));
  return router;
}

/** The standalone search service: router + health, readiness, metrics, 404 and error shape. */
export function createApp(deps: SearchAppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use((req, res, next) => {
    requestId(req, res);
    next();
  });
  app.use(httpMetrics("search"));
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", (_req, res) => {
    if (deps.isReady()) res.json({ status: "ready" });
    else sendError(res, 503, "not_ready", "the catalog is still being indexed");
  });
  app.get("/metrics", metricsHandler);
  app.use(createRouter(deps));
  app.use((req, res) => {
    sendError(res, 404, SearchErrorCode.notFound, `no route ${req.method} ${req.path.slice(0, 200)}`);
  });
  app.use(searchErrorHandler(deps.logger));
  return app;
}
