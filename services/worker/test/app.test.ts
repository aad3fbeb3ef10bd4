import { BullMqJobQueue, InProcessJobQueue } from "@app/jobs";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";
import { createLogger } from "@app/platform";
import { createApp } from "../src/index.ts";

const logger = createLogger("worker-probe-test", "silent");

const prefix = uniquePrefix("worker-probe");
const queues: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(queues.map((q) => q.close()));
  await deleteKeys([prefix]);
});

describe("worker probes", () => {
  it("is live and ready while its Redis answers", async () => {
    const queue = new BullMqJobQueue({ redisUrl: TEST_REDIS_URL, prefix });
    queues.push(queue);
    const app = createApp({ queue, logger });
    await request(app).get("/healthz").expect(200, { status: "ok" });
    await request(app).get("/readyz").expect(200, { status: "ready" });
  });

  it("is live but not ready when Redis does not answer", async () => {
    const queue = new BullMqJobQueue({ redisUrl: "redis://127.0.0.1:1", prefix });
    queues.push(queue);
    const app = createApp({ queue, logger });
    await request(app).get("/healthz").expect(200);
    const res = await request(app).get("/readyz").expect(503);
    expect(res.body).toEqual({ error: "not_ready", message: expect.stringContaining("Redis") });
  });

  it("exports job counts and durations in /metrics", async () => {
    const queue = new InProcessJobQueue();
    queues.push(queue);
    await queue.work({ "catalog.reindex": async () => ({ read: 1, indexed: 1, skipped: 0, durationMs: 0 }) });
    await queue.run("catalog.reindex", { source: "metrics" }, { jobId: "metrics", timeoutMs: 5000 });
    const res = await request(createApp({ queue, logger })).get("/metrics").expect(200);
    expect(res.text).toMatch(/jobs_total\{name="catalog\.reindex",outcome="completed"\} [1-9]/);
    expect(res.text).toMatch(/job_duration_seconds_count\{name="catalog\.reindex"\} [1-9]/);
  });

  it("answers an unknown path with 404 in the error shape", async () => {
    const res = await request(createApp({ queue: new InProcessJobQueue(), logger }))
      .get("/nope")
      .expect(404);
    expect(res.body).toEqual({ error: "not_found", message: "no route GET /nope" });
  });
});
