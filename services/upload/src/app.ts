import { Router, type Express, type RequestHandler } from "express";
import { createServiceApp } from "@app/platform";
import { errorBody } from "./domain/errors.ts";
import { createMemoryRateLimiter } from "./adapters/rate-limiter.ts";
import { keyedAccess } from "./routes/auth.ts";
import type { UploadDeps } from "./routes/deps.ts";
import { uploadErrorHandler } from "./routes/error-handler.ts";
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
  for (const prefix of ["/api", ""]) {
    router.post(`${prefix}/upload/image`, uploadAuth, image);
    router.post(`${prefix}/upload/mask`, uploadAuth, mask);
    router.get(`${prefix}/view`, auth, view);
  }
  router.use(uploadErrorHandler(deps.logger));
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
