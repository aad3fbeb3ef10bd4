import { JOB_NAMES } from "@app/contracts";
import { loadConfig } from "@app/platform";
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";
import { afterAll, describe, expect, it } from "vitest";
import { assertAllHandlers, createJobQueue, queueKindFor, serveJobs, type JobHandlers, type JobQueue } from "../src/index.ts";

const prefix = uniquePrefix("placement");
const opened: JobQueue[] = [];
afterAll(async () => {
  await Promise.all(opened.map((q) => q.close()));
  await deleteKeys([prefix]);
});
const reindexed = { read: 1, indexed: 1, skipped: 0, durationMs: 0 };

describe("serveJobs", () => {
  it("runs a service's jobs in its own process when there is no Redis", async () => {
    const config = loadConfig({});
    const queue = createJobQueue(config);
    opened.push(queue);
    expect(queue.kind).toBe(queueKindFor(config));
    expect(await serveJobs(queue, { "catalog.reindex": async () => reindexed }, { runner: "service" })).toBe(true);
    await expect(queue.run("catalog.reindex", { source: "x" }, { jobId: "placement-1", timeoutMs: 5000 })).resolves.toEqual(reindexed);
  });

  it("leaves a service's jobs to the worker when REDIS_URL is set: the job waits", async () => {
    const config = loadConfig({ REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix });
    const queue = createJobQueue(config);
    opened.push(queue);
    expect(queue.kind).toBe(queueKindFor(config));
    let ran = 0;
    expect(await serveJobs(queue, { "catalog.reindex": async () => (ran++, reindexed) }, { runner: "service" })).toBe(false);
    await queue.enqueue("catalog.reindex", { source: "x" }, { jobId: "placement-2" });
    await new Promise((r) => setTimeout(r, 200));
    expect((await queue.inspect("placement-2"))?.state).toBe("waiting");
    expect(ran).toBe(0);
  });

  it("refuses to start a worker without a handler for every job", async () => {
    const queue = createJobQueue(loadConfig({}));
    opened.push(queue);
    await expect(serveJobs(queue, { "catalog.reindex": async () => reindexed }, { runner: "worker" })).rejects.toThrow(
      /no handler for job mask\.derive/,
    );
  });
});

describe("assertAllHandlers", () => {
  const noop = async () => ({}) as never;
  it("accepts one handler for every job name", () => {
    const all = Object.fromEntries(JOB_NAMES.map((n) => [n, noop])) as unknown as JobHandlers;
    expect(() => assertAllHandlers(all)).not.toThrow();
  });

  it("names every job left without a handler", () => {
    expect(() => assertAllHandlers({ "catalog.reindex": noop })).toThrow(/no handler for job mask\.derive/);
    expect(() => assertAllHandlers({})).toThrow(/mask\.derive, catalog\.reindex|catalog\.reindex, mask\.derive/);
  });

  it("refuses a handler under a name that is not a job", () => {
    const all = Object.fromEntries(JOB_NAMES.map((n) => [n, noop]));
    expect(() => assertAllHandlers({ ...all, "mask.derivee": noop } as never)).toThrow(/no job named mask\.derivee/);
  });

  it("refuses a handler that is not a function", () => {
    const all = Object.fromEntries(JOB_NAMES.map((n) => [n, noop]));
    expect(() => assertAllHandlers({ ...all, "mask.derive": "yes" } as never)).toThrow(/not a function/);
  });
});
