import { loadConfig } from "@app/platform";
import { afterAll, describe, expect, it } from "vitest";
import { createJobQueue, type JobQueue } from "../src/index.ts";
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";

const prefix = uniquePrefix("create");
const opened: JobQueue[] = [];
afterAll(async () => {
  await Promise.all(opened.map((q) => q.close()));
  await deleteKeys([prefix]);
});

describe("createJobQueue", () => {
  it("runs jobs in process when REDIS_URL is not set", () => {
    const q = createJobQueue(loadConfig({}));
    opened.push(q);
    expect(q.kind).toBe("in-process");
  });

  it("uses BullMQ on Redis when REDIS_URL is set, with retries from the config", async () => {
    const q = createJobQueue(loadConfig({ REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, JOB_ATTEMPTS: "2", JOB_BACKOFF_MS: "10" }));
    opened.push(q);
    expect(q.kind).toBe("bullmq");
    let runs = 0;
    await q.work({
      "catalog.reindex": async () => {
        runs++;
        throw new Error("always");
      },
    });
    await expect(q.run("catalog.reindex", { source: "s" }, { jobId: "create.retries", timeoutMs: 10_000 })).rejects.toThrow(/always/);
    expect(runs).toBe(2);
    expect(await q.inspect("create.retries")).toMatchObject({ state: "failed", attemptsMade: 2 });
  });
});
