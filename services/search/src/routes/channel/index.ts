import { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import { customNodeListRoute } from "./custom-node-list.ts";
import { emptyListRoutes } from "./empty-lists.ts";
import { extensionNodeMapRoute } from "./extension-node-map.ts";
import { githubStatsRoute } from "./github-stats.ts";

/**
 * ComfyUI-Manager's channel under `/channel/`: set Manager's channel URL (`channels.list`,
 * `config.ini`'s `channel_url`) to `<this service>/channel` and it reads `<url>/<file>`.
 */
export function channelRoutes(engine: SearchEngine): Router {
  const router = Router();
  customNodeListRoute(router, engine);
  extensionNodeMapRoute(router, engine);
  githubStatsRoute(router, engine);
  emptyListRoutes(router);
  return router;
}
