import { Router } from "express";
import type { SearchEngine } from "../../adapters/search-engine.ts";
import { bulkRoute } from "./bulk.ts";
import { comfyNodeRoutes } from "./comfy-nodes.ts";
import { installRoute } from "./install.ts";
import { nodeRoute } from "./node.ts";
import { publisherRoutes } from "./publishers.ts";
import { versionRoutes } from "./versions.ts";

/**
 * The public registry's read routes beside the list (issue 18): what ComfyUI-Manager, comfy-cli
 * and the ComfyUI frontend call, one file per resource. The list itself is `../search-list.ts`.
 */
export function registryReadRoutes(engine: SearchEngine): Router {
  const router = Router();
  nodeRoute(router, engine);
  installRoute(router, engine);
  versionRoutes(router, engine);
  comfyNodeRoutes(router, engine);
  bulkRoute(router, engine);
  publisherRoutes(router, engine);
  return router;
}
