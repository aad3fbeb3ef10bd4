import type { Request, Response } from "express";
import { pipeline } from "node:stream/promises";
import { BlobNotFoundError } from "../adapters/blob-store.ts";
import { UploadFailure } from "../domain/errors.ts";
import { formatFromExt, parseAssetName } from "../domain/naming.ts";
import type { UploadDeps } from "./deps.ts";

/**
 * GET /api/view?filename=<hash>.<ext> (and /view): ComfyUI's read route. Content-addressed,
 * so the hash is a strong ETag and the bytes are cacheable forever. `type` and `subfolder`
 * are accepted and ignored, as they are for uploads.
 */
export function viewHandler(deps: UploadDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const filename = typeof req.query.filename === "string" ? req.query.filename : "";
    const parsed = parseAssetName(filename);
    if (!parsed) {
      throw new UploadFailure("not_found", "filename must be a name this service returned (<blake3 hex>.<ext>)");
    }
    const [stat, record] = await Promise.all([deps.store.stat(parsed.hash), deps.store.getRecord(parsed.hash)]);
    if (!stat || (record && record.ext !== parsed.ext)) {
      throw new UploadFailure("not_found", `no stored image ${parsed.hash}.${parsed.ext}`);
    }
    const mime = record?.mime ?? formatFromExt(parsed.ext)!.mime;
    const etag = `"${parsed.hash}"`;
    res.setHeader("ETag", etag);
    res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    res.setHeader("Accept-Ranges", "bytes");
    res.setHeader("X-Content-Type-Options", "nosniff");
    if (matchesEtag(req.headers["if-none-match"], etag)) {
      res.status(304).end();
      return;
    }
    if (deps.settings.viewMode === "redirect") {
      const url = await deps.store.presignedUrl(parsed.hash, { seconds: deps.settings.presignSeconds, contentType: mime });
      if (url) {
        res.setHeader("Cache-Control", "private, no-store");
        res.redirect(302, url);
        return;
      }
    }
    res.setHeader("Content-Type", mime);
    res.setHeader("Content-Disposition", `inline; filename="${parsed.hash}.${parsed.ext}"`);

    let range: { start: number; end: number } | undefined;
    if (req.headers.range !== undefined) {
      const ranges = req.range(stat.size, { combine: true });
      if (ranges === -1) {
        res.setHeader("Content-Range", `bytes */${stat.size}`);
        throw new UploadFailure("invalid_range", `the Range header asks for bytes outside 0-${stat.size - 1}`);
      }
      // A malformed Range (-2) or several ranges: the whole body, as RFC 9110 allows.
      if (Array.isArray(ranges) && ranges.length === 1 && ranges.type === "bytes") range = ranges[0];
    }
    let body;
    try {
      body = await deps.store.read(parsed.hash, range);
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw new UploadFailure("not_found", `no stored image ${parsed.hash}.${parsed.ext}`);
      throw err;
    }
    if (range) {
      res.status(206);
      res.setHeader("Content-Range", `bytes ${range.start}-${range.end}/${stat.size}`);
      res.setHeader("Content-Length", String(range.end - range.start + 1));
    } else {
      res.status(200);
      res.setHeader("Content-Length", String(stat.size));
    }
    if (req.method === "HEAD") {
      body.destroy();
      res.end();
      return;
    }
    await pipeline(body, res).catch(() => undefined); // a client that goes away mid-download is not an error
  };
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const v = t.trim();
    return v === "*" || v === etag || v === `W/${etag}`;
  });
}
