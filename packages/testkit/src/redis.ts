import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { testEnv } from "./env.ts";

/** The shared test Redis (the root global setup makes sure it answers). */
export const TEST_REDIS_URL = testEnv.REDIS_TEST_URL ?? "redis://127.0.0.1:6379";

/** A key prefix no other test run shares, so runs never see each other's jobs. */
export function uniquePrefix(label: string): string {
  return `test-jobs-${label}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

/** Delete every key under the given prefixes (what a test run leaves behind). */
export async function deleteKeys(prefixes: Iterable<string>, url = TEST_REDIS_URL): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    for (const prefix of prefixes) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
}

export async function countKeys(prefix: string, url = TEST_REDIS_URL): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let n = 0;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      n += keys.length;
    } while (cursor !== "0");
    return n;
  } finally {
    redis.disconnect();
  }
}

/** How many jobs a BullMQ queue holds in each state, and how many job schedulers it has. */
export async function bullCounts(
  prefix: string,
  queueName = "jobs",
  url = TEST_REDIS_URL,
): Promise<{ completed: number; failed: number; schedulers: number; active: number; waiting: number; delayed: number }> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const key = (k: string) => `${prefix}:${queueName}:${k}`;
    const [completed, failed, schedulers, delayed] = await Promise.all(
      ["completed", "failed", "repeat", "delayed"].map((k) => redis.zcard(key(k))),
    );
    const [active, waiting] = await Promise.all(["active", "wait"].map((k) => redis.llen(key(k))));
    return { completed: completed!, failed: failed!, schedulers: schedulers!, active: active!, waiting: waiting!, delayed: delayed! };
  } finally {
    redis.disconnect();
  }
}
