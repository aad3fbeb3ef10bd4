import { Router, type Request, type Response } from "express";
import type { ComfyNodesPage } from "@app/contracts";
import type { SearchEngine } from "../adapters/search-engine.ts";
import { BoundedMemo } from "../domain/bounded-memo.ts";
import { resultPage, toApiNodeJson, type JsonText } from "../domain/node-output.ts";
import { parseIncludeBanned, parseSearchQuery, toEngineQuery, type QueryParseResult } from "../domain/query.ts";
import { SearchErrorCode, sendError } from "./errors.ts";

/**
 * GET /nodes/search and GET /nodes (the registry's list route): one handler, so one query
 * string gives one body on either. GET /nodes/:nodeId: one node in the same shape.
 */
export function nodesRoutes(engine: SearchEngine): Router {
  const router = Router();
  // Parsing is a pure function of the query string, and clients repeat theirs.
  const parsedByQueryString = new BoundedMemo("parse", (_v: QueryParseResult, key: string) => key.length + 64, 16_384, 8_000_000);

  const list = async (req: Request, res: Response) => {
    const parsed = parsedByQueryString.getOrCompute(queryString(req.url), () => parseSearchQuery(req.query as Record<string, unknown>));
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const q = parsed.query;
    const result = await engine.search(toEngineQuery(q));
    sendJsonText(res, resultPage(result, q.page, q.limit));
  };
  router.get("/nodes/search", list);
  router.get("/nodes", list);

  router.get("/nodes/:nodeId", async (req, res) => {
    const parsed = parseIncludeBanned(req.query as Record<string, unknown>);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const id = req.params.nodeId;
    const node = await engine.get(id, { includeBanned: parsed.includeBanned });
    if (!node) return sendError(res, 404, SearchErrorCode.notFound, `no node with id ${JSON.stringify(id.slice(0, 200))}`);
    const json = toApiNodeJson(node);
    sendJsonText(res, { json, bytes: Buffer.byteLength(json) });
  });

  // The public registry's route for a version's node classes. The catalog carries the class
  // names of each node's latest version only, so that version (or `latest`) is the one known.
  router.get("/nodes/:nodeId/versions/:version/comfy-nodes", async (req, res) => {
    const parsed = parseIncludeBanned(req.query as Record<string, unknown>);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const { nodeId, version } = req.params;
    const node = await engine.get(nodeId, { includeBanned: parsed.includeBanned });
    if (!node) return sendError(res, 404, SearchErrorCode.notFound, `no node with id ${JSON.stringify(nodeId.slice(0, 200))}`);
    const latest = node.latest_version?.version;
    if (version !== "latest" && version !== latest) {
      const known = latest ? `its latest version, ${latest}, or \`latest\`` : "`latest`";
      return sendError(res, 404, SearchErrorCode.notFound, `the catalog knows the node classes of ${known} only, not of version ${JSON.stringify(version.slice(0, 100))}`);
    }
    const body: ComfyNodesPage = { comfy_nodes: (node.app_node_names ?? []).map((name) => ({ comfy_node_name: name })), totalNumberOfPages: 1 };
    res.json(body);
  });

  return router;
}

function queryString(url: string): string {
  const i = url.indexOf("?");
  return i < 0 ? "" : url.slice(i + 1);
}

/**
 * 200 with JSON text already built. Node writes headers and a string body in one write;
 * Express's send would copy the text into a Buffer and write the two apart, which costs a
 * fifth of a cached search. HEAD gets the same headers and no body.
 */
function sendJsonText(res: Response, { json, bytes }: JsonText): void {
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", bytes);
  res.end(json);
}
