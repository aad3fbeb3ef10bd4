import type { Request, Response } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import type { StoredNode } from "../../domain/catalog-record.ts";
import { SearchErrorCode, sendError } from "../errors.ts";

export interface PackLookup {
  /** Serve a banned pack (our extension: GET /nodes/{id} and the classes route with `include_banned=true`). */
  includeBanned: boolean;
}

/**
 * What the registry answers for a banned pack on every per-pack read route (registry-backend's
 * `assertNodeBanned` on GetNode, GetNodeVersion, ListNodeVersions and InstallNode: echo's
 * `HTTPError(403, "Node Banned")`, whose body is `{"message": "Node Banned"}`), in our shape.
 */
export function sendBanned(res: Response): void {
  sendError(res, 403, SearchErrorCode.forbidden, "Node Banned");
}

export const quoted = (s: string, max = 200) => JSON.stringify(s.slice(0, max));

/**
 * The pack a per-pack route names in `:nodeId`, or an answer already sent: a 302 to the
 * canonical id when the id differs from one only by case (the registry does this, and
 * comfy-cli and ComfyUI-Manager follow it), 404 for an unknown or deleted pack, 403 for a
 * banned one.
 */
export async function findPack(engine: SearchEngine, req: Request, res: Response, opts: PackLookup): Promise<StoredNode | undefined> {
  const id = String(req.params.nodeId);
  const pack = await engine.get(id, { includeBanned: true });
  if (!pack) {
    const canonical = await engine.resolveId(id);
    if (canonical !== undefined && canonical !== id) {
      res.redirect(302, withCanonicalId(req.originalUrl, canonical));
      return undefined;
    }
    sendError(res, 404, SearchErrorCode.notFound, `no node with id ${quoted(id)}`);
    return undefined;
  }
  if (pack.status === "NodeStatusBanned" && !opts.includeBanned) {
    sendBanned(res);
    return undefined;
  }
  return pack;
}

/** The same URL, path and query, with the segment after `/nodes/` (or `/archives/`) replaced by the canonical id. */
export function withCanonicalId(originalUrl: string, canonical: string): string {
  const q = originalUrl.indexOf("?");
  const path = q < 0 ? originalUrl : originalUrl.slice(0, q);
  const marker = path.startsWith("/archives/") ? "/archives/" : "/nodes/";
  const start = path.indexOf(marker) + marker.length;
  const end = path.indexOf("/", start);
  return `${path.slice(0, start)}${encodeURIComponent(canonical)}${end < 0 ? "" : path.slice(end)}${q < 0 ? "" : originalUrl.slice(q)}`;
}
