import type { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import { customNodeList } from "../../domain/channel.ts";
import { catalogFile } from "./catalog-file.ts";

/** GET /channel/custom-node-list.json: Manager's pack list (start-up, the list, installs by URL). */
export function customNodeListRoute(router: Router, engine: SearchEngine): void {
  router.get("/channel/custom-node-list.json", catalogFile(engine, customNodeList));
}
