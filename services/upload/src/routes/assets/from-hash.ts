import type { Router } from "express";
import { CreateFromHashBody, type AssetCreated } from "@app/contracts";
import { toAsset } from "../../domain/asset-view.ts";
import { ownerOf } from "../../http/auth.ts";
import { parseBody } from "../../http/json-body.ts";
import type { AssetRouteContext } from "./context.ts";

/** POST /api/assets/from-hash: a reference for bytes already stored, no upload (`created_new` is false: the bytes were known). */
export function fromHashRoute(router: Router, prefix: string, { deps, library, access, jsonBody }: AssetRouteContext): void {
  router.post(`${prefix}/assets/from-hash`, access.read, jsonBody, async (req, res) => {
    const owner = ownerOf(res);
    const body = parseBody(CreateFromHashBody, req.body);
    await library.checkPreview(owner, body.preview_id);
    const reference = await library.recordKnownContent(owner, body.hash.slice("blake3:".length), {
      ...(body.name && { name: body.name }),
      tags: body.tags,
      userMetadata: body.user_metadata,
      ...(body.mime_type && { mimeType: body.mime_type }),
      ...(body.preview_id && { previewId: body.preview_id }),
    });
    const answer: AssetCreated = { ...(await toAsset(reference, deps.references, deps.settings.previewUrls)), created_new: false };
    res.status(201).json(answer);
  });
}
