import { Router } from "express";
import { ApiFailure } from "../../domain/errors.ts";
import type { KeyedAccess } from "../../http/auth.ts";
import type { UploadDeps } from "../../http/deps.ts";
import { assetShape, apiErrorHandler } from "../../http/error-handler.ts";
import { timedJsonBody } from "../../http/json-body.ts";
import type { AssetLibrary } from "../../library/asset-library.ts";
import { assetRoutes } from "./asset.ts";
import { assetTagsRoutes } from "./asset-tags.ts";
import { tusRoutes } from "../tus/index.ts";
import { contentRoute } from "./content.ts";
import { contentHashRoute } from "./content-hash.ts";
import type { AssetRouteContext } from "./context.ts";
import { createAssetRoute } from "./create-asset.ts";
import { fromHashRoute } from "./from-hash.ts";
import { listRoute } from "./list.ts";
import { scanRoutes } from "./scans.ts";
import { tagRefineRoute } from "./tag-refine.ts";
import { tagsRoute } from "./tags.ts";

/**
 * ComfyUI's asset API (`app/assets/api/routes.py` in the ComfyUI server) over the
 * content-addressed store: references in the ReferenceStore, bytes in the BlobStore, one file
 * per resource. `/api/assets*` and `/api/tags`, with and without `/api`, behind the key; every
 * failure, 401 and 429 included, is `{error: {code, message, details}}`. Every reference
 * belongs to an owner (the key's principal, `ownerOf`); a key reaches only its owner's.
 */
export function assetRouter(deps: UploadDeps, library: AssetLibrary, access: KeyedAccess): Router {
  const router = Router();
  const context: AssetRouteContext = { deps, library, access, jsonBody: timedJsonBody(deps.settings) };
  for (const prefix of ["/api", ""]) {
    // The fixed paths first: `hash`, `from-hash`, `seed`, `prune` and `tags` are no asset ids.
    tusRoutes(router, prefix, context);
    contentHashRoute(router, prefix, context);
    fromHashRoute(router, prefix, context);
    scanRoutes(router, prefix, context);
    tagRefineRoute(router, prefix, context);
    createAssetRoute(router, prefix, context);
    listRoute(router, prefix, context);
    assetRoutes(router, prefix, context);
    contentRoute(router, prefix, context);
    assetTagsRoutes(router, prefix, context);
    tagsRoute(router, prefix, context);
  }
  // Anything else under the asset API's paths (an empty id, a method it lacks) is this face's 404, in its shape.
  router.all(/^\/(?:api\/)?(?:assets|tags)(?:\/.*)?$/, access.read, async (req) => {
    throw new ApiFailure("not_found", `no route ${req.method} ${req.path.slice(0, 200)}`);
  });
  router.use(apiErrorHandler(deps.logger, assetShape));
  return router;
}
