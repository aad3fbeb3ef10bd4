import type { Request, Response } from "express";
import { ApiFailure } from "../../domain/errors.ts";
import { formatFromExt, parseAssetName } from "../../domain/naming.ts";
import { sendBlob } from "../../http/blob-response.ts";
import type { UploadDeps } from "../../http/deps.ts";

/**
 * GET /api/view?filename=<hash>.<ext> (and /view): ComfyUI's read route. `type` and `subfolder`
 * are accepted and ignored, as they are for uploads.
 */
export function viewHandler(deps: UploadDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const filename = typeof req.query.filename === "string" ? req.query.filename : "";
    const parsed = parseAssetName(filename);
    if (!parsed) {
      throw new ApiFailure("not_found", "filename must be a name this service returned (<blake3 hex>.<ext>)");
    }
    const [stat, sidecar] = await Promise.all([deps.blobs.stat(parsed.hash), deps.blobs.getSidecar(parsed.hash)]);
    if (!stat || (sidecar && sidecar.ext !== parsed.ext)) {
      throw new ApiFailure("not_found", `no stored image ${parsed.hash}.${parsed.ext}`);
    }
    const name = `${parsed.hash}.${parsed.ext}`;
    await sendBlob(req, res, deps, {
      hash: parsed.hash,
      size: stat.size,
      mime: sidecar?.mime ?? formatFromExt(parsed.ext)!.mime,
      disposition: `inline; filename="${name}"`,
      label: name,
    });
  };
}
