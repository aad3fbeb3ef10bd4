import type { Router } from "express";
import type { KeyedAccess } from "../../http/auth.ts";
import type { UploadDeps } from "../../http/deps.ts";
import type { AssetLibrary } from "../../library/asset-library.ts";
import { uploadImageHandler } from "./image.ts";
import { uploadMaskHandler } from "./mask.ts";
import { viewAccess, viewHandler } from "./view.ts";

/** The spec's face, with and without `/api` as a local ComfyUI server answers it: upload an image, a mask, view one. */
export function comfyUploadRoutes(router: Router, deps: UploadDeps, library: AssetLibrary, access: KeyedAccess): void {
  const image = uploadImageHandler(deps, library);
  const mask = uploadMaskHandler(deps, library);
  const view = viewHandler(deps);
  const viewDoor = viewAccess(deps, access.read);
  for (const prefix of ["/api", ""]) {
    router.post(`${prefix}/upload/image`, access.upload, image);
    router.post(`${prefix}/upload/mask`, access.upload, mask);
    router.get(`${prefix}/view`, viewDoor, view);
  }
}
