import { Router, type RequestHandler } from "express";
import type { ComfyNodesPage } from "@app/contracts";
import type { SearchEngine } from "../adapters/search-engine.ts";
import { toApiNodeJson } from "../domain/node-output.ts";
import { parseIncludeBanned } from "../domain/query.ts";
import { SearchErrorCode, sendError, sendJsonText } from "./errors.ts";

/** The search list routes (see `search-list.ts`) and GET /nodes/:nodeId, one node in the same shape. */
export function nodesRoutes(engine: SearchEngine, list: RequestHandler): Router {
  const router = Router();
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
