import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * `preview_url`: a URL a browser can fetch without a key (an `<img>` or `<video>` sends none),
 * as S3's presigned URLs are: `/api/view?asset=blake3:<hex>&mime=<type>&expires=<unix s>&signature=<…>`,
 * where the signature is HMAC-SHA256 under the server's secret over the hash, the type it is
 * served as and the expiry. Only the server can make one; changing any part of it, or using it
 * after it expires, is refused. It names content (shared and deduplicated across owners, as
 * `/api/view`'s names are), so the URL of a nominated preview is the preview's own.
 *
 * The expiry is rounded up to the next whole STEP past `ttl`, so the same asset gets the same
 * URL for STEP seconds (two answers a moment apart agree, and browsers can cache it), and every
 * URL handed out is valid for at least `ttl`.
 */
const STEP_SECONDS = 3600;

export interface SignedView {
  hash: string;
  mime: string;
  expires: number;
}

function signature(secret: Buffer, v: SignedView): Buffer {
  return createHmac("sha256", secret).update(`view\n${v.hash}\n${v.mime}\n${v.expires}`).digest();
}

export function signedViewUrl(secret: Buffer, hash: string, mime: string, ttlSeconds: number, nowMs = Date.now()): string {
  const expires = Math.ceil((nowMs / 1000 + ttlSeconds) / STEP_SECONDS) * STEP_SECONDS;
  const sig = signature(secret, { hash, mime, expires }).toString("base64url");
  return `/api/view?asset=blake3:${hash}&mime=${encodeURIComponent(mime)}&expires=${expires}&signature=${sig}`;
}

/** The signed view a query names, or why not: `absent` (no `asset` parameter: an ordinary /api/view), `invalid`, `expired`. */
export function verifySignedView(
  secret: Buffer,
  query: Record<string, unknown>,
  nowMs = Date.now(),
): SignedView | "absent" | "invalid" | "expired" {
  const { asset, mime, expires, signature: sig } = query;
  if (asset === undefined) return "absent";
  if (typeof asset !== "string" || typeof mime !== "string" || typeof expires !== "string" || typeof sig !== "string") return "invalid";
  const m = /^blake3:([0-9a-f]{64})$/.exec(asset);
  if (!m || !/^\d{1,12}$/.test(expires)) return "invalid";
  const view = { hash: m[1]!, mime, expires: Number(expires) };
  const expected = signature(secret, view);
  const given = Buffer.from(sig, "base64url");
  // Constant time: the comparison tells nothing of how much of a forged signature was right.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "invalid";
  if (view.expires * 1000 <= nowMs) return "expired";
  return view;
}
