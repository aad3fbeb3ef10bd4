import type { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import type { ArchiveLinks } from "../../domain/archive-links.ts";
import { toApiNode, toApiNodeJson } from "../../fast/node-output.ts";
import { parseIncludeBanned } from "../../domain/query.ts";
import { SearchErrorCode, sendError, sendJsonText } from "../errors.ts";
import { findPack } from "./pack.ts";

/** GET /nodes/{nodeId}: one pack, in the list's shape; banned ones only with `include_banned=true`. */
export function nodeRoute(router: Router, engine: SearchEngine, links: ArchiveLinks): void {
  router.get("/nodes/:nodeId", async (req, res) => {
    const parsed = parseIncludeBanned(req.query);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const pack = await findPack(engine, req, res, { includeBanned: parsed.includeBanned });
    if (!pack) return;
    // The cached text serves when the links leave the version as it is (archives off, no download URL).
    const node = toApiNode(pack);
    const latest = node.latest_version && links.version(req, node.latest_version);
    const json = latest === node.latest_version ? toApiNodeJson(pack) : JSON.stringify({ ...node, latest_version: latest });
    sendJsonText(res, { json, bytes: Buffer.byteLength(json) });
  });
}
