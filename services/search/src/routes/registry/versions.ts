import { AllVersionsQuery, NodeVersionsQuery, type NodeVersion, type VersionsPage } from "@app/contracts";
import type { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import type { ArchiveLinks } from "../../domain/archive-links.ts";
import type { StoredNode } from "../../domain/catalog-record.ts";
import { parseParams } from "../../domain/query.ts";
import { filterVersions, installVersion, newestFirst, versionNamed, versionsOf } from "../../domain/versions.ts";
import { SearchErrorCode, sendError, sendJson } from "../errors.ts";
import { findPack, quoted, sendBanned } from "./pack.ts";

/**
 * GET /nodes/{nodeId}/versions (ComfyUI-Manager's version picker, the frontend's version list),
 * GET /nodes/{nodeId}/versions/{version}, and GET /versions (every pack's, paged).
 */
export function versionRoutes(router: Router, engine: SearchEngine, links: ArchiveLinks): void {
  router.get("/nodes/:nodeId/versions", async (req, res) => {
    const parsed = parseParams(NodeVersionsQuery, req.query);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const pack = await findPack(engine, req, res, { includeBanned: false });
    if (!pack) return;
    const { statuses, include_status_reason } = parsed.value;
    sendJson(
      res,
      filterVersions(versionsOf(pack), { statuses, includeStatusReason: include_status_reason }).map((v) => links.version(req, v)),
    );
  });

  router.get("/nodes/:nodeId/versions/:version", async (req, res) => {
    const pack = await findPack(engine, req, res, { includeBanned: false });
    if (!pack) return;
    // The frontend's conflict check asks `latest` for a pack installed without a version.
    const version = req.params.version === "latest" ? installVersion(pack) : versionNamed(pack, req.params.version);
    if (!version)
      return sendError(
        res,
        404,
        SearchErrorCode.notFound,
        `node ${quoted(pack.id)} has no version ${quoted(req.params.version, 100)} in this catalog`,
      );
    sendJson(res, links.version(req, version));
  });

  router.get("/versions", async (req, res) => {
    const parsed = parseParams(AllVersionsQuery, req.query);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const { nodeId, statuses, include_status_reason, status_reason, page, pageSize } = parsed.value;
    let list: readonly NodeVersion[];
    if (nodeId !== undefined) {
      const pack = await engine.get(nodeId, { includeBanned: true });
      if (pack?.status === "NodeStatusBanned") return sendBanned(res);
      list = pack ? versionsOf(pack) : [];
    } else {
      list = everyVersion(await engine.all());
    }
    const matched = filterVersions(list, { statuses, statusReason: status_reason, includeStatusReason: include_status_reason });
    const body: VersionsPage = {
      total: matched.length,
      versions: matched.slice((page - 1) * pageSize, page * pageSize).map((v) => links.version(req, v)),
      page,
      pageSize,
      totalPages: Math.ceil(matched.length / pageSize),
    };
    sendJson(res, body);
  });
}

const flattened = new WeakMap<readonly StoredNode[], NodeVersion[]>();

/**
 * Every version of every pack not banned, newest `createdAt` first (then pack id, then the
 * pack's own order), built once per index: the embedded engine hands the same array until a
 * reindex.
 */
function everyVersion(packs: readonly StoredNode[]): NodeVersion[] {
  let list = flattened.get(packs);
  if (list) return list;
  const byPack = (a: NodeVersion, b: NodeVersion) => (a.node_id! < b.node_id! ? -1 : a.node_id! > b.node_id! ? 1 : 0);
  // Each pack's own list is newest first already: a stable sort keeps it among equal dates.
  list = packs
    .filter((p) => p.status !== "NodeStatusBanned")
    .flatMap(versionsOf)
    .sort((a, b) => newestFirst(a, b) || byPack(a, b));
  flattened.set(packs, list);
  return list;
}
