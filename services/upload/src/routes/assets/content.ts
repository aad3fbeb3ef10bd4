import type { Router } from "express";
import { bareMime, isDangerousType } from "../../domain/content-type.ts";
import { ApiFailure } from "../../domain/errors.ts";
import { KEYED_CACHE, sendBlob } from "../../http/blob-response.ts";
import type { AssetRouteContext } from "./context.ts";
import { findAsset } from "./find-asset.ts";

/**
 * GET /api/assets/{id}/content: the bytes, under /api/view's caching and Range rules. Types
 * a browser would run as a document (HTML, SVG, XML, script) are always an attachment of
 * type application/octet-stream, whatever `disposition` asks.
 */
export function contentRoute(router: Router, prefix: string, { deps, access }: AssetRouteContext): void {
  router.get(`${prefix}/assets/:id/content`, access.read, async (req, res) => {
    // Found and touched at once: a range request pays one trip to the database, not two.
    const ref = await findAsset(deps.references, req, res, { touching: true });
    const stat = await deps.blobs.stat(ref.hash);
    if (!stat) throw new ApiFailure("not_found", `the content of asset ${ref.id} is no longer stored`);
    const dangerous = isDangerousType(ref.mimeType);
    const disposition = req.query.disposition === "inline" && !dangerous ? "inline" : "attachment";
    await sendBlob(req, res, deps, {
      hash: ref.hash,
      size: stat.size,
      mime: dangerous ? "application/octet-stream" : bareMime(ref.mimeType),
      disposition: `${disposition}; filename*=UTF-8''${encodeURIComponent(ref.name.replace(/[\r\n]/g, ""))}`,
      label: `blake3:${ref.hash}`,
      cacheControl: KEYED_CACHE,
    });
  });
}
