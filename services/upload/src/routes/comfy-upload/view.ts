import type { NextFunction, Request, RequestHandler, Response } from "express";
import { bareMime, isDangerousType } from "../../domain/content-type.ts";
import { ApiFailure } from "../../domain/errors.ts";
import { formatFromExt, parseAssetName } from "../../domain/naming.ts";
import { verifySignedView, type SignedView } from "../../domain/signed-view-url.ts";
import { KEYED_CACHE, sendBlob, signedCache } from "../../http/blob-response.ts";
import type { UploadDeps } from "../../http/deps.ts";

/**
 * The door of /api/view: a request carrying a signed `preview_url` (`asset`, `mime`, `expires`,
 * `signature`; domain/signed-view-url.ts) needs no key, since an `<img>` cannot send one; a
 * signature that does not verify or has expired is 401. Every other request goes through `keyed`.
 */
export function viewAccess(deps: UploadDeps, keyed: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const signed = verifySignedView(deps.settings.previewUrls.secret, req.query);
    if (signed === "absent") return keyed(req, res, next);
    if (signed === "invalid")
      return next(new ApiFailure("unauthorized", "this preview URL's signature is not valid: use the preview_url the asset API answered"));
    if (signed === "expired")
      return next(new ApiFailure("unauthorized", "this preview URL has expired: read the asset again for a fresh preview_url"));
    res.locals.signedView = signed;
    next();
  };
}

/**
 * GET /api/view?filename=<hash>.<ext> (and /view): ComfyUI's read route. `type` and `subfolder`
 * are accepted and ignored, as they are for uploads. A signed `preview_url` serves the content
 * it names as the type it was signed with, byte ranges included; types a browser would run as
 * a document are an `application/octet-stream` attachment, as `/api/assets/{id}/content` sends them.
 */
export function viewHandler(deps: UploadDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const signed = res.locals.signedView as SignedView | undefined;
    if (signed) return sendSigned(req, res, deps, signed);
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
      cacheControl: KEYED_CACHE,
    });
  };
}

async function sendSigned(req: Request, res: Response, deps: UploadDeps, view: SignedView): Promise<void> {
  const stat = await deps.blobs.stat(view.hash);
  if (!stat) throw new ApiFailure("not_found", `no stored content blake3:${view.hash}`);
  const dangerous = isDangerousType(view.mime);
  await sendBlob(req, res, deps, {
    hash: view.hash,
    size: stat.size,
    mime: dangerous ? "application/octet-stream" : bareMime(view.mime),
    disposition: `${dangerous ? "attachment" : "inline"}; filename="${view.hash}"`,
    label: `blake3:${view.hash}`,
    cacheControl: signedCache(view.expires),
  });
}
