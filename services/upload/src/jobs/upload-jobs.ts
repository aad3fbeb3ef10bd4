import type { JobHandlers } from "@app/jobs";
import { createMaskDeriveHandler, type MaskDeriveDeps } from "./mask-derive.ts";

/** The jobs the upload service owns, over one blob store; where they run is `@app/jobs`' `serveJobs`. */
export function uploadJobs(deps: MaskDeriveDeps): Pick<JobHandlers, "mask.derive"> {
  return { "mask.derive": createMaskDeriveHandler(deps) };
}
