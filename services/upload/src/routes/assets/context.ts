import type { RequestHandler } from "express";
import type { KeyedAccess } from "../../http/auth.ts";
import type { UploadDeps } from "../../http/deps.ts";
import type { AssetLibrary } from "../../library/asset-library.ts";

/** What every asset API route file is handed. */
export interface AssetRouteContext {
  deps: UploadDeps;
  library: AssetLibrary;
  access: KeyedAccess;
  /** Every JSON body under the one body timeout (BODY_TIMEOUT_MS). */
  jsonBody: RequestHandler;
}
