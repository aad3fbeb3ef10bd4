import { Router, type Request, type Response } from "express";
import type { SearchEngine } from "../adapters/search-engine.ts";
import { toApiNodeJson, toPageJson } from "../domain/node-output.ts";
import { parseIncludeBanned, parseSearchQuery, toEngineQuery } from "../domain/query.ts";
import { SearchErrorCode, sendError } from "./errors.ts";

/**
 * GET /nodes/search and GET /nodes (the registry's list route): one handler, so one query
 * string gives one body on either. GET /nodes/:nodeId: one node in the same shape.
 */
export function nodesRoutes(engine: SearchEngine): Router {
  const router = Router();

  const list = async (req: Request, res: Response) => {
    const parsed = parseSearchQuery(req.query as Record<string, unknown>);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const q = parsed.query;
    const result = await engine.search(toEngineQuery(q));
    res.type("application/json").send(toPageJson(result.nodes, result.total, q.page, q.limit));
  };
  router.get("/nodes/search", list);
  router.get("/nodes", list);

  router.get("/nodes/:nodeId", async (req, res) => {
    const parsed = parseIncludeBanned(req.query as Record<string, unknown>);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const id = req.params.nodeId;
    const node = await engine.get(id, { includeBanned: parsed.includeBanned });
    if (!node) return sendError(res, 404, SearchErrorCode.notFound, `no node with id ${JSON.stringify(id.slice(0, 200))}`);
    res.type("application/json").send(toApiNodeJson(node));
  });

  return router;
}
