import { Router, type Express } from "express";
import { createServiceApp } from "@app/platform";
import { createMemoryRateLimiter } from "./adapters/limits/rate-limiter.ts";
import { errorBody } from "./domain/errors.ts";
import { keyedAccessOf } from "./http/auth.ts";
import type { UploadDeps } from "./http/deps.ts";
import { apiErrorHandler } from "./http/error-handler.ts";
import { AssetLibrary } from "./library/asset-library.ts";
import { assetRouter } from "./routes/assets/index.ts";
import { comfyUploadRoutes } from "./routes/comfy-upload/index.ts";

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
  const access = keyedAccessOf(deps.keys, limits);
  const library = new AssetLibrary(deps.blobs, deps.references);
  // ComfyUI's asset API, behind the same key, answering errors in ComfyUI's envelope.
  router.use(assetRouter(deps, library, access));
  // The spec's face: /api/upload/image, /api/upload/mask, /api/view.
  comfyUploadRoutes(router, deps, library, access);
  router.use(apiErrorHandler(deps.logger));
  return router;
}

/** The standalone upload service: the router, health, readiness, metrics, 404, every request logged. */
export function createApp(deps: UploadDeps): Express {
  return createServiceApp({
    name: "upload",
    logger: deps.logger,
    successLogLevel: "info",
    router: createRouter(deps),
    isReady: () => (deps.isReady ? deps.isReady() : deps.blobs.ping()),
    notReadyBody: { status: "unavailable" },
    notFoundBody: (req) => errorBody("not_found", `no route ${req.method} ${req.path}`),
    errorHandler: apiErrorHandler(deps.logger),
  });
}
