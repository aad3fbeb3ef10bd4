import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { freePort, OwnRedis } from "@app/testkit/processes";
import { BullMqJobQueue, QueueUnavailableError } from "../src/index.ts";

/**
 * Redis stopped and started again under a queue that is producing and working. The shared
 * Redis must not be stopped (other tests use it), so this test runs its own redis-server on a
 * free port, with an append-only file as a production Redis would have.
 */
const dir = mkdtempSync(join(tmpdir(), "jobs-redis-outage-"));
let redis: OwnRedis | undefined;

afterAll(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const result = (source: string) => ({ read: source.length, indexed: 1, skipped: 0, durationMs: 0 });

describe("BullMQ job queue across a Redis restart", () => {
  it("answers QueueUnavailableError while Redis is down, then loses and duplicates nothing", async () => {
    redis = new OwnRedis(await freePort(), dir);
    await redis.start();
    const q = new BullMqJobQueue({
      redisUrl: redis.url,
      prefix: "outage",
      lockDurationMs: 1000,
      stalledIntervalMs: 500,
      backoffMs: 50,
    });
    const runs = new Map<string, number>();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    try {
      await q.work({
        "catalog.reindex": async ({ source }) => {
          runs.set(source, (runs.get(source) ?? 0) + 1);
          if (source === "during-outage") {
            started();
            await gate;
          }
          return result(source);
        },
      });
      const before = Array.from({ length: 20 }, (_, i) => `before-${i}`);
      for (const s of before) await q.run("catalog.reindex", { source: s }, { jobId: s, timeoutMs: 10_000 });

      await q.enqueue("catalog.reindex", { source: "during-outage" }, { jobId: "during-outage" });
      await inFlight;
      await redis.stop();

      await expect(q.enqueue("catalog.reindex", { source: "refused" }, { jobId: "refused" })).rejects.toBeInstanceOf(QueueUnavailableError);
      // The job in flight finishes its work while Redis is away.
      release();
      await new Promise((r) => setTimeout(r, 500));

      await redis.start();
      const after = Array.from({ length: 20 }, (_, i) => `after-${i}`);
      await vi.waitFor(() => q.enqueue("catalog.reindex", { source: after[0]! }, { jobId: after[0]! }), { timeout: 15_000, interval: 200 });
      for (const s of after) await q.enqueue("catalog.reindex", { source: s }, { jobId: s });

      for (const s of [...before, "during-outage", ...after]) {
        await expect(q.waitFor("catalog.reindex", s, { timeoutMs: 20_000 })).resolves.toEqual(result(s));
      }
      for (const s of [...before, ...after]) expect(runs.get(s)).toBe(1);
      // The job cut off by the outage may run again (its completion could not be stored), to the same result.
      expect(runs.get("during-outage")).toBeGreaterThanOrEqual(1);
      expect(runs.has("refused")).toBe(false);
      expect(await q.inspect("refused")).toBeUndefined();

      // SIGTERM while Redis is away again: the queue lets go instead of waiting for Redis.
      await redis.stop();
      await expect(q.close()).resolves.toBeUndefined();
    } finally {
      await q.close();
    }
  });
});
