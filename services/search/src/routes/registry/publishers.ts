import { PublisherNodesQuery } from "@app/contracts";
import type { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import { toApiNode } from "../../fast/node-output.ts";
import { parseParams } from "../../domain/query.ts";
import { SearchErrorCode, sendError, sendJson } from "../errors.ts";
import { quoted } from "./pack.ts";

/**
 * GET /publishers/{id} and /publishers/{id}/nodes. The catalog has no publisher table: a
 * publisher is known through its packs, and answered as they embed it.
 */
export function publisherRoutes(router: Router, engine: SearchEngine): void {
  router.get("/publishers/:publisherId", async (req, res) => {
    const id = req.params.publisherId;
    const [pack] = await engine.publishedBy(id, { includeBanned: true });
    if (!pack?.publisher) return sendError(res, 404, SearchErrorCode.notFound, `no publisher with id ${quoted(id)} in this catalog`);
    sendJson(res, pack.publisher);
  });

  // As the registry: a publisher with no packs (or none known) is an empty list, not a 404.
  router.get("/publishers/:publisherId/nodes", async (req, res) => {
    const parsed = parseParams(PublisherNodesQuery, req.query);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const packs = await engine.publishedBy(req.params.publisherId, { includeBanned: parsed.value.include_banned });
    sendJson(res, packs.map(toApiNode));
  });
}
