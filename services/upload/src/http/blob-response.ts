import type { Request, Response } from "express";
import type { Readable } from "node:stream";
import { BlobNotFoundError } from "@app/blobs";
import { ApiFailure } from "../domain/errors.ts";
import type { UploadDeps } from "./deps.ts";

export interface BlobToSend {
  hash: string;
  size: number;
  mime: string;
  /** The whole Content-Disposition value. */
  disposition: string;
  /** What a 404 names when the bytes vanish between the lookup and the read. */
  label: string;
  /** Cache-Control: `KEYED_CACHE` for an answer to a key, `signedCache` for a signed preview URL. */
  cacheControl: string;
}

/**
 * An answer to a key is for that key's holder only: a shared cache must not hand it to a request
 * without one. The bytes behind a content-addressed name never change, so the browser may keep them.
 */
export const KEYED_CACHE = "private, max-age=31536000, immutable";

/** A signed preview URL serves anyone who holds it, until it expires: no cache may keep it longer. */
export function signedCache(expiresSeconds: number, nowMs = Date.now()): string {
  return `public, max-age=${Math.max(0, Math.floor(expiresSeconds - nowMs / 1000))}, immutable`;
}

/**
 * Answer with stored bytes, as /api/view and /api/assets/{id}/content both do. Content-addressed,
 * so the hash is a strong ETag (who may cache the answer, and how long, is `blob.cacheControl`): `If-None-Match` → 304, one
 * `Range` → 206 (outside the object → 416, several or malformed → the whole body), and with an S3
 * store in redirect mode a 302 to a presigned URL.
 */
export async function sendBlob(req: Request, res: Response, deps: UploadDeps, blob: BlobToSend): Promise<void> {
  const etag = `"${blob.hash}"`;
  res.setHeader("ETag", etag);
  res.setHeader("Cache-Control", blob.cacheControl);
  res.setHeader("Accept-Ranges", "bytes");
  res.setHeader("X-Content-Type-Options", "nosniff");
  if (matchesEtag(req.headers["if-none-match"], etag)) {
    res.status(304).end();
    return;
  }
  if (deps.settings.viewMode === "redirect") {
    const url = await deps.blobs.presignedUrl(blob.hash, { seconds: deps.settings.presignSeconds, contentType: blob.mime });
    if (url) {
      res.setHeader("Cache-Control", "private, no-store");
      res.redirect(302, url);
      return;
    }
  }
  res.setHeader("Content-Type", blob.mime);
  res.setHeader("Content-Disposition", blob.disposition);

  let range: { start: number; end: number } | undefined;
  if (req.headers.range !== undefined) {
    const ranges = req.range(blob.size, { combine: true });
    if (ranges === -1) {
      res.setHeader("Content-Range", `bytes */${blob.size}`);
      throw new ApiFailure("invalid_range", `the Range header asks for bytes outside 0-${blob.size - 1}`);
    }
    // A malformed Range (-2) or several ranges: the whole body, as RFC 9110 allows.
    if (Array.isArray(ranges) && ranges.length === 1 && ranges.type === "bytes") range = ranges[0];
  }
  let body;
  try {
    body = await deps.blobs.read(blob.hash, range);
  } catch (err) {
    if (err instanceof BlobNotFoundError) throw new ApiFailure("not_found", `no stored image ${blob.label}`);
    throw err;
  }
  if (range) {
    res.status(206);
    res.setHeader("Content-Range", `bytes ${range.start}-${range.end}/${blob.size}`);
    res.setHeader("Content-Length", String(range.end - range.start + 1));
  } else {
    res.status(200);
    res.setHeader("Content-Length", String(blob.size));
  }
  if (req.method === "HEAD") {
    body.destroy();
    res.end();
    return;
  }
  await sendBody(body, res);
}

/**
 * `body` into `res`; resolves when the response is done or the client has gone (not an error).
 * `pipe` with the two failures wired by hand rather than `stream.pipeline`, which makes and
 * aborts an AbortController per call (a DOMException with its stack trace): about a tenth of the
 * CPU of a small range (bench/asset-download-1gb.ts).
 */
function sendBody(body: Readable, res: Response): Promise<void> {
  return new Promise((resolve) => {
    body.once("error", () => res.destroy());
    res.once("close", () => {
      body.destroy();
      resolve();
    });
    body.pipe(res);
  });
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const v = t.trim();
    return v === "*" || v === etag || v === `W/${etag}`;
  });
}
