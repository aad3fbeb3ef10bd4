import type { Router } from "express";
import { TagsBody, type TagsAdded, type TagsRemoved } from "@app/contracts";
import { parseBody } from "../../http/json-body.ts";
import type { AssetRouteContext } from "./context.ts";
import { assetNotFound, findAsset } from "./find-asset.ts";

/** POST and DELETE /api/assets/{id}/tags: add (refused whole past MAX_TAGS_PER_ASSET) or remove tags of one reference. */
export function assetTagsRoutes(router: Router, prefix: string, { deps, library, access, jsonBody }: AssetRouteContext): void {
  const { references } = deps;
  router.post(`${prefix}/assets/:id/tags`, access.read, jsonBody, async (req, res) => {
    const ref = await findAsset(references, req, res);
    const { tags } = parseBody(TagsBody, req.body);
    const result = await library.addTags(ref, tags);
    if (!result) throw assetNotFound(ref.id);
    const answer: TagsAdded = { added: result.added, already_present: result.alreadyPresent, total_tags: result.reference.tags };
    res.json(answer);
  });
  router.delete(`${prefix}/assets/:id/tags`, access.read, jsonBody, async (req, res) => {
    const ref = await findAsset(references, req, res);
    const { tags } = parseBody(TagsBody, req.body);
    const result = await references.removeTags(ref.id, ref.owner, tags);
    if (!result) throw assetNotFound(ref.id);
    const answer: TagsRemoved = { removed: result.removed, not_present: result.notPresent, total_tags: result.reference.tags };
    res.json(answer);
  });
}
