import { InstallQuery } from "@app/contracts";
import type { Router } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import type { ArchiveLinks } from "../../domain/archive-links.ts";
import { parseParams } from "../../domain/query.ts";
import { installVersion, versionNamed } from "../../domain/versions.ts";
import { SearchErrorCode, sendError, sendJson } from "../errors.ts";
import { findPack, quoted } from "./pack.ts";

/**
 * GET /nodes/{nodeId}/install[?version=]: the version ComfyUI-Manager and comfy-cli download
 * (`downloadUrl`). Without `version`, the install-path version; with it, that version whatever
 * its status, as the registry answers. The registry also counts an install here; this service
 * counts nothing.
 */
export function installRoute(router: Router, engine: SearchEngine, links: ArchiveLinks): void {
  router.get("/nodes/:nodeId/install", async (req, res) => {
    const parsed = parseParams(InstallQuery, req.query);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const pack = await findPack(engine, req, res, { includeBanned: false });
    if (!pack) return;
    const asked = parsed.value.version;
    const version = asked === undefined ? installVersion(pack) : versionNamed(pack, asked);
    if (!version) {
      const what = asked === undefined ? "no installable version" : `no version ${quoted(asked)}`;
      return sendError(res, 404, SearchErrorCode.notFound, `node ${quoted(pack.id)} has ${what} in this catalog`);
    }
    sendJson(res, links.version(req, version));
  });
}
