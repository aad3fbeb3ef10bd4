import type { Router } from "express";
import { assetHashHex } from "../../domain/asset-hash.ts";
import type { AssetRouteContext } from "./context.ts";

/**
 * HEAD /api/assets/hash/{hash}: the cheap dedup check, a stat of the store (the bytes are
 * never read). Global, as ComfyUI's: content is shared between owners (and /api/view
 * already serves any stored bytes to any key by their hash name), so it says nothing a key
 * could not learn otherwise, and it lets a client skip uploading bytes the store has.
 */
export function contentHashRoute(router: Router, prefix: string, { deps, access }: AssetRouteContext): void {
  router.head(`${prefix}/assets/hash/:hash`, access.read, async (req, res) => {
    const exists = (await deps.blobs.stat(assetHashHex(String(req.params.hash ?? "")))) !== null;
    // An explicit empty length, as ComfyUI's server answers: a client reading it as a GET-shaped reply is not left waiting.
    res
      .status(exists ? 200 : 404)
      .setHeader("Content-Length", "0")
      .end();
  });
}
