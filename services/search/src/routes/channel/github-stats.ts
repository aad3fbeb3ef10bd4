import type { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import { githubStats } from "../../domain/channel.ts";
import { catalogFile } from "./catalog-file.ts";

/** GET /channel/github-stats.json: stars, last update and author age, read with the list. */
export function githubStatsRoute(router: Router, engine: SearchEngine): void {
  router.get(
    "/channel/github-stats.json",
    catalogFile(engine, (packs) => githubStats(packs, Date.now())),
  );
}
