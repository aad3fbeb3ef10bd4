import { Router, type Express, type RequestHandler } from "express";
import { createServiceApp } from "@app/platform";
import { errorBody } from "./domain/errors.ts";
import { createMemoryRateLimiter } from "./adapters/limits/rate-limiter.ts";
import { assetHandlers } from "./routes/asset-routes.ts";
import { keyedAccess } from "./routes/auth.ts";
import type { UploadDeps } from "./routes/deps.ts";
import { assetShape, uploadErrorHandler } from "./routes/error-handler.ts";
import { assetUploadHandler } from "./routes/asset-upload.ts";
import { tusUploadHandler } from "./routes/assets/uploads.ts";
import { timedJsonBody } from "./routes/json-body.ts";
import { uploadImageHandler, uploadMaskHandler } from "./routes/upload-routes.ts";
import { viewHandler } from "./routes/view-route.ts";

/**
 * The upload routes, with and without the `/api` prefix as a local ComfyUI server answers
 * them, plus their own error handler. No catch-all 404, so a gateway can mount it beside others.
 */
export function createRouter(deps: UploadDeps): Router {
  const router = Router();
  const limits = {
    limiter: deps.limiter ?? createMemoryRateLimiter(),
    get defaults() {
      return deps.settings.rateLimits;
    },
  };
  // Every keyed route takes one of these: the key is checked, then counted against its limits.
  // `auth` is the class of every route that takes no upload body (view, assets, tags).
  const auth = keyedAccess(deps.keys, limits, "assets");
  const uploadAuth = keyedAccess(deps.keys, limits, "upload");
  const image = uploadImageHandler(deps);
  const mask = uploadMaskHandler(deps);
  const view = viewHandler(deps);
  // ComfyUI's asset API, behind the same key, answering errors in ComfyUI's envelope.
  router.use(assetRouter(deps, auth, uploadAuth));
  for (const prefix of ["/api", ""]) {
    router.post(`${prefix}/upload/image`, uploadAuth, image);
    router.post(`${prefix}/upload/mask`, uploadAuth, mask);
    router.get(`${prefix}/view`, auth, view);
  }
  router.use(uploadErrorHandler(deps.logger));
  return router;
}

/**
 * The asset API's routes (`/api/assets*`, `/api/tags`, with and without `/api`) with their own
 * error handler: every failure, 401 and 429 included, is `{error: {code, message, details}}`.
 */
function assetRouter(deps: UploadDeps, auth: RequestHandler, uploadAuth: RequestHandler): Router {
  const router = Router();
  const assets = assetHandlers(deps);
  const upload = assetUploadHandler(deps);
  const tus = tusUploadHandler(deps);
  // Every JSON body under the one body timeout (BODY_TIMEOUT_MS).
  const jsonBody = timedJsonBody(deps.settings);
  for (const prefix of ["/api", ""]) {
    // Resumable uploads (tus 1.0.0). OPTIONS tells the protocol's capabilities and needs no key.
    router.options([`${prefix}/assets/uploads`, `${prefix}/assets/uploads/:id`], tus);
    router.post(`${prefix}/assets/uploads`, uploadAuth, tus);
    router.patch(`${prefix}/assets/uploads/:id`, uploadAuth, tus);
    router.head(`${prefix}/assets/uploads/:id`, auth, tus);
    router.delete(`${prefix}/assets/uploads/:id`, auth, tus);
    router.head(`${prefix}/assets/hash/:hash`, auth, assets.headByHash);
    router.post(`${prefix}/assets/from-hash`, auth, jsonBody, assets.createFromHash);
    router.all(new RegExp(`^${prefix}/assets/(?:seed|prune)(?:/.*)?$`), auth, assets.notSupported);
    router.get(`${prefix}/assets/tags/refine`, auth, assets.refineTags);
    router.post(`${prefix}/assets`, uploadAuth, upload);
    router.get(`${prefix}/assets`, auth, assets.list);
    router.get(`${prefix}/assets/:id`, auth, assets.get);
    router.get(`${prefix}/assets/:id/content`, auth, assets.content);
    router.put(`${prefix}/assets/:id`, auth, jsonBody, assets.update);
    router.post(`${prefix}/assets/:id/tags`, auth, jsonBody, assets.addTags);
    router.delete(`${prefix}/assets/:id/tags`, auth, jsonBody, assets.removeTags);
    router.delete(`${prefix}/assets/:id`, auth, assets.remove);
    router.get(`${prefix}/tags`, auth, assets.tags);
  }
  // Anything else under the asset API's paths (an empty id, a method it lacks) is this face's 404, in its shape.
  router.all(/^\/(?:api\/)?(?:assets|tags)(?:\/.*)?$/, auth, assets.noRoute);
  router.use(uploadErrorHandler(deps.logger, assetShape));
  return router;
}

/** The standalone upload service: the router, health, readiness, metrics, 404, every request logged. */
export function createApp(deps: UploadDeps): Express {
  return createServiceApp({
    name: "upload",
    logger: deps.logger,
    successLogLevel: "info",
    router: createRouter(deps),
    isReady: () => (deps.isReady ? deps.isReady() : deps.store.ping()),
    notReadyBody: { status: "unavailable" },
    notFoundBody: (req) => errorBody("not_found", `no route ${req.method} ${req.path}`),
    errorHandler: uploadErrorHandler(deps.logger),
  });
}
