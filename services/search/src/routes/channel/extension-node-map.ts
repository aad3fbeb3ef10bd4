import type { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import { extensionNodeMap } from "../../domain/channel.ts";
import { catalogFile } from "./catalog-file.ts";

/** GET /channel/extension-node-map.json: class → pack, for Manager's "Install Missing Custom Nodes". */
export function extensionNodeMapRoute(router: Router, engine: SearchEngine): void {
  router.get("/channel/extension-node-map.json", catalogFile(engine, extensionNodeMap));
}
