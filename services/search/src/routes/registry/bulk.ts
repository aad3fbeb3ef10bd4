import { BULK_VERSIONS_MAX, BulkNodeVersionsRequest, type BulkNodeVersionResult, type BulkNodeVersionsResponse } from "@app/contracts";
import express, { type Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import type { ArchiveLinks } from "../../domain/archive-links.ts";
import { parseParams } from "../../domain/query.ts";
import { versionNamed } from "../../domain/versions.ts";
import { SearchErrorCode, sendError, sendJson } from "../errors.ts";

/** Enough for BULK_VERSIONS_MAX identifiers of ordinary length; a larger body answers 413. */
const BODY_LIMIT = "256kb";

/**
 * POST /bulk/nodes/versions: many `{node_id, version}` at once (the frontend's conflict check).
 * Each answers `success` with the version, or `not_found` (unknown, deleted or banned pack, or a
 * version the catalog does not hold), in the order asked. One engine query serves the whole body.
 */
export function bulkRoute(router: Router, engine: SearchEngine, links: ArchiveLinks): void {
  router.post("/bulk/nodes/versions", express.json({ limit: BODY_LIMIT, strict: true, type: () => true }), async (req, res) => {
    const parsed = parseParams(BulkNodeVersionsRequest, req.body);
    if (!parsed.ok)
      return sendError(
        res,
        400,
        SearchErrorCode.invalidParameter,
        `the body must be {node_versions: [{node_id, version}, …]} with at most ${BULK_VERSIONS_MAX} entries: ${parsed.message}`,
      );
    const asked = parsed.value.node_versions;
    const ids = [...new Set(asked.map((a) => a.node_id))];
    const found = ids.length === 0 ? [] : (await engine.search({ ids, includeBanned: false, offset: 0, limit: ids.length })).nodes;
    const byId = new Map(found.map((p) => [p.id, p]));
    const results = asked.map((identifier): BulkNodeVersionResult => {
      const pack = byId.get(identifier.node_id);
      const version = pack ? versionNamed(pack, identifier.version) : undefined;
      return version ? { identifier, status: "success", node_version: links.version(req, version) } : { identifier, status: "not_found" };
    });
    const body: BulkNodeVersionsResponse = { node_versions: results };
    sendJson(res, body);
  });
}
