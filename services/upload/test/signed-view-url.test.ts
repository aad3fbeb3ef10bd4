import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signedViewUrl, verifySignedView } from "../src/domain/signed-view-url.ts";

/** preview_url's signature: what it lets in, when it stops, and that one URL serves for a while. */
const secret = randomBytes(32);
const HASH = "ab".repeat(32);
const query = (url: string) => Object.fromEntries(new URL(url, "http://x").searchParams);

describe("signed preview URLs", () => {
  it("verify under the secret they were made with, until they expire", () => {
    const now = Date.UTC(2026, 10, 26, 10, 0, 0);
    const url = signedViewUrl(secret, HASH, "image/png", 86_400, now);
    const view = verifySignedView(secret, query(url), now);
    expect(view).toMatchObject({ hash: HASH, mime: "image/png" });
    const expires = (view as { expires: number }).expires * 1000;
    // Valid for at least the TTL, at most an hour more (the expiry is rounded up to the hour).
    expect(expires - now).toBeGreaterThanOrEqual(86_400_000);
    expect(expires - now).toBeLessThanOrEqual(86_400_000 + 3_600_000);
    expect(verifySignedView(secret, query(url), expires - 1)).not.toBe("expired");
    expect(verifySignedView(secret, query(url), expires)).toBe("expired");
  });

  it("are the same URL for the same content within the hour, so answers agree and browsers cache", () => {
    const start = Date.UTC(2026, 10, 26, 10, 0, 1);
    expect(signedViewUrl(secret, HASH, "image/png", 60, start)).toBe(signedViewUrl(secret, HASH, "image/png", 60, start + 3_000_000));
  });

  it("refuse another secret, any changed part, a missing part, and are absent without `asset`", () => {
    const url = signedViewUrl(secret, HASH, "text/plain", 3600);
    const q = query(url);
    expect(verifySignedView(randomBytes(32), q)).toBe("invalid");
    for (const changed of [
      { ...q, asset: `blake3:${"cd".repeat(32)}` },
      { ...q, mime: "text/html" },
      { ...q, expires: String(Number(q.expires) + 1) },
      { ...q, signature: q.signature!.slice(0, -2) },
      { ...q, signature: "" },
      { ...q, asset: "blake3:../../etc/passwd" },
      { ...q, expires: "1e99" },
      { asset: q.asset, mime: q.mime, expires: q.expires },
    ]) {
      expect(verifySignedView(secret, changed)).toBe("invalid");
    }
    expect(verifySignedView(secret, { filename: `${HASH}.png` })).toBe("absent");
  });
});
