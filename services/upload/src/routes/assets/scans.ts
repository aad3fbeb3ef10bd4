import type { Router } from "express";
import { ApiFailure } from "../../domain/errors.ts";
import type { AssetRouteContext } from "./context.ts";

/** POST /api/assets/seed, /prune and the seed status: ComfyUI's scans of its own folders, which this service has none of (501). */
export function scanRoutes(router: Router, prefix: string, { access }: AssetRouteContext): void {
  router.all(new RegExp(`^${prefix}/assets/(?:seed|prune)(?:/.*)?$`), access.read, async (req) => {
    throw new ApiFailure(
      "not_supported",
      `${req.method} ${req.path.slice(0, 200)} scans ComfyUI's own model, input and output folders; this service has none (assets arrive by upload)`,
    );
  });
}
