import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";
import { BullMqJobQueue, InProcessJobQueue, type JobHandlers } from "../src/index.ts";

/** `schedule`: one run per interval, whoever schedules it, on both implementations. */
const counting = (runs: { n: number }, gate?: Promise<void>): Partial<JobHandlers> => ({
  "catalog.reindex": async () => {
    runs.n++;
    await gate;
    return { read: 1, indexed: 1, skipped: 0, durationMs: 0 };
  },
});

describe("in-process schedule (fake timers)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs at once, then once per interval; scheduling the same id again replaces it; unschedule stops it", async () => {
    vi.useFakeTimers();
    const q = new InProcessJobQueue();
    const runs = { n: 0 };
    await q.work(counting(runs));
    await q.schedule("refresh", "catalog.reindex", { source: "x" }, { everyMs: 1000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(runs.n).toBe(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(runs.n).toBe(4);
    await q.schedule("refresh", "catalog.reindex", { source: "x" }, { everyMs: 1000 }); // a second replica's call, in effect
    await vi.advanceTimersByTimeAsync(2000);
    expect(runs.n).toBe(7); // one at the re-schedule, then one a second: never two timers
    await q.unschedule("refresh");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs.n).toBe(7);
    await q.close();
  });

  it("a tick while the previous run is still going adds nothing", async () => {
    vi.useFakeTimers();
    const q = new InProcessJobQueue();
    const runs = { n: 0 };
    let open!: () => void;
    await q.work(counting(runs, new Promise<void>((r) => (open = r))));
    await q.schedule("refresh", "catalog.reindex", { source: "x" }, { everyMs: 1000 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs.n).toBe(1);
    open();
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs.n).toBe(2);
    await q.close();
  });

  it("retries a failed run with the schedule's own tries and backoff, then waits for the next tick", async () => {
    vi.useFakeTimers();
    const q = new InProcessJobQueue({ attempts: 1 });
    let tries = 0;
    await q.work({
      "catalog.reindex": async () => {
        tries++;
        throw new Error("registry down");
      },
    });
    await q.schedule("refresh", "catalog.reindex", { source: "x" }, { everyMs: 60_000, attempts: 3, backoffMs: 100 });
    await vi.advanceTimersByTimeAsync(0);
    expect(tries).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(tries).toBe(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(tries).toBe(3);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(tries).toBe(3);
    await vi.advanceTimersByTimeAsync(60_000 - 10_300); // to the next tick
    expect(tries).toBe(4);
    await q.close();
  });
});

describe("BullMQ schedule (real Redis)", () => {
  const prefixes: string[] = [];
  afterAll(() => deleteKeys(prefixes));

  it("two queues scheduling the same id leave one scheduler, and each run is taken by one worker", async () => {
    const prefix = uniquePrefix("schedule");
    prefixes.push(prefix);
    const runs = { n: 0 };
    const queues = [0, 1].map(() => new BullMqJobQueue({ redisUrl: TEST_REDIS_URL, prefix }));
    const redis = new Redis(TEST_REDIS_URL);
    try {
      for (const q of queues) {
        await q.work(counting(runs));
        await q.schedule("refresh", "catalog.reindex", { source: "x" }, { everyMs: 300 });
      }
      const completed = () => redis.zcard(`${prefix}:jobs:completed`);
      for (let i = 0; i < 400 && (await completed()) < 4; i++) await new Promise((r) => setTimeout(r, 50));
      for (const q of queues) await q.unschedule("refresh");
      expect(await redis.zcard(`${prefix}:jobs:repeat`)).toBe(0);
      await Promise.all(queues.map((q) => q.close()));
      expect(await completed()).toBeGreaterThanOrEqual(4);
      expect(runs.n).toBe(await completed());
    } finally {
      await Promise.all(queues.map((q) => q.close()));
      redis.disconnect();
    }
  }, 60_000);
});
