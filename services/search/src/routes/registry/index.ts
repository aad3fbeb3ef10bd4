import { Router } from "express";
import type { VersionClasses } from "../../adapters/registry/version-classes.ts";
import type { SearchEngine } from "../../ports/search-engine.ts";
import { UPSTREAM_LINKS, type ArchiveLinks } from "../../domain/archive-links.ts";
import { bulkRoute } from "./bulk.ts";
import { comfyNodeRoutes } from "./comfy-nodes.ts";
import { installRoute } from "./install.ts";
import { nodeRoute } from "./node.ts";
import { publisherRoutes } from "./publishers.ts";
import { versionRoutes } from "./versions.ts";

/**
 * The public registry's read routes beside the list (issue 18): what ComfyUI-Manager, comfy-cli
 * and the ComfyUI frontend call, one file per resource. The list itself is `../search-list.ts`.
 * `links` decides each answered version's `downloadUrl` (this service's archive route, or upstream's).
 */
export function registryReadRoutes(engine: SearchEngine, links: ArchiveLinks = UPSTREAM_LINKS, versionClasses?: VersionClasses): Router {
  const router = Router();
  nodeRoute(router, engine, links);
  installRoute(router, engine, links);
  versionRoutes(router, engine, links);
  comfyNodeRoutes(router, engine, versionClasses);
  bulkRoute(router, engine, links);
  publisherRoutes(router, engine);
  return router;
}
