import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Logger } from "@app/platform";

/**
 * Per-key counters over a fixed 60-second window, by rate-limiter-flexible: in this process's
 * memory (embedded) or in Redis, shared by every process that uses the same prefix (at scale).
 */
export interface RateLimiter {
  readonly kind: "memory" | "redis";
  /**
   * Count `amount` against `keyId`'s allowance of `points` per minute in `bucket`. A refused
   * amount stays counted (the library's rule; refund it when it should not be).
   */
  consume(bucket: string, keyId: string, points: number, amount: number): Promise<Decision>;
  /** Give back an amount counted earlier. */
  refund(bucket: string, keyId: string, points: number, amount: number): Promise<void>;
  close(): Promise<void>;
}

export interface Decision {
  allowed: boolean;
  /** When the key's window ends: the wait before a refused amount can be counted again. */
  retryAfterMs: number;
}

export const WINDOW_SECONDS = 60;

type Make = (bucket: string, points: number) => RateLimiterAbstract;

/** One library limiter per bucket and allowance: its `points` is fixed at construction, keys differ in theirs. */
class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    readonly kind: "memory" | "redis",
    private readonly make: Make,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  async consume(bucket: string, keyId: string, points: number, amount: number): Promise<Decision> {
    try {
      const res = await this.limiter(bucket, points).consume(keyId, amount);
      return { allowed: true, retryAfterMs: res.msBeforeNext };
    } catch (refused) {
      if (refused instanceof RateLimiterRes) return { allowed: false, retryAfterMs: refused.msBeforeNext };
      throw refused;
    }
  }

  async refund(bucket: string, keyId: string, points: number, amount: number): Promise<void> {
    await this.limiter(bucket, points).reward(keyId, amount);
  }

  close(): Promise<void> {
    return this.onClose();
  }

  private limiter(bucket: string, points: number): RateLimiterAbstract {
    const id = `${bucket}/${points}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = this.make(bucket, points);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

export function createMemoryRateLimiter(): RateLimiter {
  return new FlexibleRateLimiter(
    "memory",
    (bucket, points) => new RateLimiterMemory({ keyPrefix: bucket, points, duration: WINDOW_SECONDS }),
  );
}

/**
 * Counters in Redis under `<prefix>:rl:<bucket>:<key id>`, one atomic script per count. While
 * Redis is unreachable each process counts in its own memory (the library's insurance limiter):
 * limits stay, per process, and nothing waits on a reconnect.
 */
export async function createRedisRateLimiter(opts: { url: string; prefix: string; logger: Logger }): Promise<RateLimiter> {
  const redis = new Redis(opts.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    retryStrategy: (times) => Math.min(100 * times, 2_000),
  });
  redis.on("error", (err: Error) => opts.logger.debug({ err: err.message }, "rate-limit connection error"));
  // Connected before serving, so counts are shared from the first request; down at boot, it reconnects on its own.
  await redis
    .connect()
    .catch((err: Error) => opts.logger.warn({ err: err.message }, "rate limits counted per process until Redis answers"));
  return new FlexibleRateLimiter(
    "redis",
    (bucket, points) =>
      new RateLimiterRedis({
        storeClient: redis,
        rejectIfRedisNotReady: true,
        keyPrefix: `${opts.prefix}:rl:${bucket}`,
        points,
        duration: WINDOW_SECONDS,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix: bucket, points, duration: WINDOW_SECONDS }),
      }),
    async () => {
      redis.disconnect();
    },
  );
}
