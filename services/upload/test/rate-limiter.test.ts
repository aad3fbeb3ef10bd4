import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from "../src/adapters/limits/rate-limiter.ts";
import { freePort } from "@app/testkit/processes";
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from "@app/testkit/redis";
import { rateLimiterConformance } from "./rate-limiter-conformance.ts";

const silent = pino({ level: "silent" });
const prefix = uniquePrefix("ratelimit");
const open: RateLimiter[] = [];
const track = async (made: RateLimiter | Promise<RateLimiter>) => {
  const l = await made;
  open.push(l);
  return l;
};
afterAll(async () => {
  for (const l of open) await l.close();
  await deleteKeys([prefix]);
});

describe("memory rate limiter", () => rateLimiterConformance(() => track(createMemoryRateLimiter())));

describe("Redis rate limiter", () => {
  rateLimiterConformance(() => track(createRedisRateLimiter({ url: TEST_REDIS_URL, prefix, logger: silent })));

  it("two limiters on one prefix (two processes) share each key's count; another prefix does not", async () => {
    const a = await track(createRedisRateLimiter({ url: TEST_REDIS_URL, prefix, logger: silent }));
    const b = await track(createRedisRateLimiter({ url: TEST_REDIS_URL, prefix, logger: silent }));
    const other = await track(createRedisRateLimiter({ url: TEST_REDIS_URL, prefix: `${prefix}-other`, logger: silent }));
    expect((await a.consume("upload_rpm", "shared", 2, 1)).allowed).toBe(true);
    expect((await b.consume("upload_rpm", "shared", 2, 1)).allowed).toBe(true);
    expect((await a.consume("upload_rpm", "shared", 2, 1)).allowed).toBe(false);
    expect((await b.consume("upload_rpm", "shared", 2, 1)).allowed).toBe(false);
    expect((await other.consume("upload_rpm", "shared", 2, 1)).allowed).toBe(true);
    const redis = new Redis(TEST_REDIS_URL);
    expect(await redis.get(`${prefix}:rl:upload_rpm:shared`)).toBe("4"); // counted in Redis (refusals too), not in each process
    redis.disconnect();
    await deleteKeys([`${prefix}-other`]);
  });

  it("with Redis unreachable, counts in this process's memory instead of failing or waiting", async () => {
    const down = await track(createRedisRateLimiter({ url: `redis://127.0.0.1:${await freePort()}`, prefix, logger: silent }));
    expect((await down.consume("upload_rpm", "k", 2, 1)).allowed).toBe(true);
    expect((await down.consume("upload_rpm", "k", 2, 1)).allowed).toBe(true);
    expect((await down.consume("upload_rpm", "k", 2, 1)).allowed).toBe(false);
  });
});
