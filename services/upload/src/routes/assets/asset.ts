import type { Router } from "express";
import { UpdateAssetBody } from "@app/contracts";
import { toAsset } from "../../domain/asset-view.ts";
import { parseBody } from "../../http/json-body.ts";
import type { AssetRouteContext } from "./context.ts";
import { assetNotFound, findAsset } from "./find-asset.ts";

/** GET, PUT and DELETE /api/assets/{id}: one of the owner's references. */
export function assetRoutes(router: Router, prefix: string, { deps, library, access, jsonBody }: AssetRouteContext): void {
  const { references } = deps;
  router.get(`${prefix}/assets/:id`, access.read, async (req, res) => {
    res.json(await toAsset(await findAsset(references, req, res), references, deps.settings.previewUrls));
  });

  /** Name, tags, user_metadata, preview_id (null clears it). */
  router.put(`${prefix}/assets/:id`, access.read, jsonBody, async (req, res) => {
    const ref = await findAsset(references, req, res);
    const body = parseBody(UpdateAssetBody, req.body);
    const updated = await library.update(ref, {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.tags !== undefined && { tags: body.tags }),
      // New user_metadata keeps the stored file's name unless it names its own (ComfyUI keeps `filename` in step).
      ...(body.user_metadata !== undefined && { userMetadata: withFilename(body.user_metadata, ref.userMetadata) }),
      ...(body.preview_id !== undefined && { previewId: body.preview_id }),
    });
    if (!updated) throw assetNotFound(ref.id);
    res.json(await toAsset(updated, references, deps.settings.previewUrls));
  });

  /**
   * The reference only. The bytes stay, as ComfyUI keeps content after its last reference goes:
   * they may be named by another owner's reference (or be uploaded again), and
   * `HEAD /api/assets/hash/{hash}` still answers 200.
   */
  router.delete(`${prefix}/assets/:id`, access.read, async (req, res) => {
    const ref = await findAsset(references, req, res);
    if (!(await references.delete(ref.id, ref.owner))) throw assetNotFound(ref.id);
    res.status(204).end();
  });
}

function withFilename(next: Record<string, unknown>, previous: Record<string, unknown>): Record<string, unknown> {
  return "filename" in next || !("filename" in previous) ? next : { ...next, filename: previous.filename };
}
