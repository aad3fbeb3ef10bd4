import type { RequestListener } from "node:http";
import { Router } from "express";
import { createServiceApp, directRoutesFirst, type DirectRoute, type Logger } from "@app/platform";
import type { SearchEngine } from "./ports/search-engine.ts";
import type { CatalogStatus } from "./catalog/catalog-status.ts";
import type { ArchiveService } from "./adapters/archives/archive-service.ts";
import type { VersionClasses } from "./adapters/registry/version-classes.ts";
import { channelRoutes } from "./routes/channel/index.ts";
import { registryReadRoutes } from "./routes/registry/index.ts";
import { searchListHandler } from "./routes/search-list.ts";
import { archiveRoute } from "./routes/archives.ts";
import { SearchErrorCode, searchErrorHandler } from "./routes/errors.ts";
import { applyRegistryCors, registryCors } from "./routes/cors.ts";
import { SEARCH_PATHS } from "./routes/paths.ts";
import { registerMemoMetrics } from "./memo-metrics.ts";
import { UPSTREAM_LINKS, type ArchiveLinks } from "./domain/archive-links.ts";

export interface SearchRouterDeps {
  engine: SearchEngine;
  logger: Logger;
  /** The node archives (`/archives/...`, and the `downloadUrl` every answered version carries); none: upstream's URLs. */
  archives?: ArchiveService;
  /** Classes of versions the catalog does not hold them for, read through from the registry; none: 404 for those. */
  versionClasses?: VersionClasses;
  /** Teams' own packs (publishers, tokens, publishing); none: the registry's write routes are absent. */
  privatePacks?: { router: Router; links(inner: ArchiveLinks): ArchiveLinks };
}

export interface SearchAppDeps extends SearchRouterDeps {
  /** True once start-up's local part is over (snapshot restored, a file source indexed); never waits on the network. */
  isReady(): boolean;
  /** The catalog's state for /readyz: fresh, stale or empty, and why. */
  catalogStatus?(): CatalogStatus;
}

export interface SearchRoutes {
  /** Every search route with its own error handling, and no catch-all: a gateway can mount several routers. */
  router: Router;
  /** The list routes, to be answered ahead of Express (the same handler as the router's). */
  direct: DirectRoute[];
}

export function createSearchRoutes(deps: SearchRouterDeps): SearchRoutes {
  registerMemoMetrics();
  const list = searchListHandler(deps.engine, deps.logger);
  const router = Router();
  router.use([...SEARCH_PATHS], registryCors);
  // Any spelling of the list paths the direct route does not take (a trailing slash, capitals) reaches the same handler here.
  router.get("/nodes/search", list);
  router.get("/nodes", list);
  if (deps.privatePacks) router.use(deps.privatePacks.router);
  const links = deps.privatePacks ? deps.privatePacks.links(deps.archives?.links ?? UPSTREAM_LINKS) : deps.archives?.links;
  router.use(registryReadRoutes(deps.engine, links, deps.versionClasses));
  router.use(channelRoutes(deps.engine));
  if (deps.archives)
    archiveRoute(router, {
      engine: deps.engine,
      store: deps.archives.store,
      fetchFromUpstream: deps.archives.fetchesFromUpstream,
      logger: deps.logger.child({ component: "archives" }),
    });
  router.use(searchErrorHandler(deps.logger));
  const direct: DirectRoute = {
    paths: ["/nodes/search", "/nodes"],
    handle: (req, res) => (applyRegistryCors(req, res) ? undefined : list(req, res)),
  };
  return { router, direct: [direct] };
}

/** What the standalone app serves (a `SearchService` is one). */
export interface SearchAppParts {
  routes(): SearchRoutes;
  isReady(): boolean;
  readyDetails(): Record<string, unknown>;
}

/** The standalone search service: its routes + health, readiness, metrics, 404 and error shape. */
export function createSearchApp(parts: SearchAppParts, logger: Logger): RequestListener {
  const { router, direct } = parts.routes();
  const app = createServiceApp({
    name: "search",
    logger,
    router,
    isReady: () => parts.isReady(),
    notReadyBody: { error: "not_ready", message: "the catalog is still being indexed" },
    readyDetails: () => parts.readyDetails(),
    notFoundBody: (req) => ({ error: SearchErrorCode.notFound, message: `no route ${req.method} ${req.path.slice(0, 200)}` }),
    errorHandler: searchErrorHandler(logger),
  });
  return directRoutesFirst(app, direct, { service: "search", logger });
}

/** The standalone app over parts a test or bench assembles itself (an engine it filled, a runtime). */
export function createApp(deps: SearchAppDeps): RequestListener {
  return createSearchApp(
    { routes: () => createSearchRoutes(deps), isReady: () => deps.isReady(), readyDetails: () => searchReadyDetails(deps) },
    deps.logger,
  );
}

/** What search adds to /readyz: the catalog's state, with the archives' under `catalog.archives`. */
export function searchReadyDetails(deps: { catalogStatus?(): CatalogStatus; archives?: ArchiveService }): Record<string, unknown> {
  if (!deps.catalogStatus) return {};
  const catalog = deps.catalogStatus();
  return { catalog: deps.archives ? { ...catalog, archives: deps.archives.status() } : catalog };
}
