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
    res.json(await toAsset(await findAsset(references, req, res), references));
  });

  /** Name, tags, user_metadata, preview_id (null clears it). */
  router.put(`${prefix}/assets/:id`, access.read, jsonBody, async (req, res) => {
    const ref = await findAsset(references, req, res);
    const body = parseBody(UpdateAssetBody, req.body);
    const updated = await library.update(ref, {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.tags !== undefined && { tags: body.tags }),
      ...(body.user_metadata !== undefined && { userMetadata: body.user_metadata }),
      ...(body.preview_id !== undefined && { previewId: body.preview_id }),
    });
    if (!updated) throw assetNotFound(ref.id);
    res.json(await toAsset(updated, references));
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
