import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import type { RateLimiter } from "../src/adapters/limits/rate-limiter.ts";

/** What every RateLimiter must do, run against each implementation (rate-limiter.test.ts). */
export function rateLimiterConformance(make: () => Promise<RateLimiter>): void {
  const key = () => `key-${randomBytes(6).toString("hex")}`;

  it("allows `points` per minute, then refuses with the wait until the key's window ends", async () => {
    const limiter = await make();
    const k = key();
    for (let i = 0; i < 3; i++) expect((await limiter.consume("upload_rpm", k, 3, 1)).allowed).toBe(true);
    const refused = await limiter.consume("upload_rpm", k, 3, 1);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it("counts each key and each bucket on its own", async () => {
    const limiter = await make();
    const [a, b] = [key(), key()];
    expect((await limiter.consume("upload_rpm", a, 1, 1)).allowed).toBe(true);
    expect((await limiter.consume("upload_rpm", a, 1, 1)).allowed).toBe(false);
    expect((await limiter.consume("upload_rpm", b, 1, 1)).allowed).toBe(true);
    expect((await limiter.consume("assets_rpm", a, 1, 1)).allowed).toBe(true);
  });

  it("counts amounts (bytes), and a refund makes room again", async () => {
    const limiter = await make();
    const k = key();
    expect((await limiter.consume("upload_mbpm", k, 1000, 800)).allowed).toBe(true);
    expect((await limiter.consume("upload_mbpm", k, 1000, 300)).allowed).toBe(false);
    await limiter.refund("upload_mbpm", k, 1000, 300);
    expect((await limiter.consume("upload_mbpm", k, 1000, 200)).allowed).toBe(true);
    expect((await limiter.consume("upload_mbpm", k, 1000, 1)).allowed).toBe(false);
  });
}
