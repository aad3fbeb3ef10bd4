import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { freePort } from "@app/testkit/processes";
import { childEnv } from "@app/testkit/env";
import { BullMqJobQueue, QueueUnavailableError, toBullJobId } from "../src/index.ts";
import { TEST_REDIS_URL, countKeys, deleteKeys, uniquePrefix } from "@app/testkit/redis";

const prefixes: string[] = [];
const queues: BullMqJobQueue[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await Promise.all(queues.splice(0).map((q) => q.close()));
});
afterAll(() => deleteKeys(prefixes));

function open(opts: Partial<ConstructorParameters<typeof BullMqJobQueue>[0]> & { prefix: string }): BullMqJobQueue {
  const q = new BullMqJobQueue({ redisUrl: TEST_REDIS_URL, ...opts });
  queues.push(q);
  return q;
}

function prefix(label: string): string {
  const p = uniquePrefix(label);
  prefixes.push(p);
  return p;
}

const outputs = new WeakMap<ChildProcess, string>();

/** Keep everything the child prints, so a line printed before anyone waits for it is not missed. */
function record(child: ChildProcess): ChildProcess {
  outputs.set(child, "");
  child.stdout?.on("data", (chunk: Buffer) => outputs.set(child, (outputs.get(child) ?? "") + chunk.toString()));
  return child;
}

/** Resolves once the child has printed a line that matches. */
function lineFrom(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = (outputs.get(child) ?? "").split("\n").find((l) => pattern.test(l));
      if (!line) return;
      child.stdout?.off("data", check);
      child.off("exit", onExit);
      resolve(line);
    };
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`worker exited (${code ?? signal}) before printing ${pattern}`));
    child.stdout?.on("data", check);
    child.once("exit", onExit);
    check();
  });
}

describe("BullMQ job queue on Redis", () => {
  it("a job whose worker is killed mid-job completes on another worker", async () => {
    const p = prefix("crash");
    const producer = open({ prefix: p });
    const { data, jobId } = { data: { source: "crash/one" }, jobId: "test.crash.one" };

    const child = record(
      spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./fixtures/hanging-worker.ts", import.meta.url))], {
        env: childEnv({ REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: p }),
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    children.push(child);
    await lineFrom(child, /^ready$/);
    await producer.enqueue("catalog.reindex", data, { jobId });
    await lineFrom(child, /^started crash\/one$/);
    expect(await producer.inspect(jobId)).toMatchObject({ state: "active" });

    child.kill("SIGKILL");
    await once(child, "exit");

    let runs = 0;
    const survivor = open({ prefix: p, lockDurationMs: 1000, stalledIntervalMs: 300 });
    await survivor.work({
      "catalog.reindex": async ({ source }) => {
        runs++;
        return { read: source.length, indexed: 1, skipped: 0, durationMs: 0 };
      },
    });
    await expect(producer.waitFor("catalog.reindex", jobId, { timeoutMs: 30_000 })).resolves.toEqual({
      read: "crash/one".length,
      indexed: 1,
      skipped: 0,
      durationMs: 0,
    });
    expect(runs).toBe(1);
    expect(await producer.inspect(jobId)).toMatchObject({ state: "completed" });
  });

  it("a producer whose Redis does not answer throws QueueUnavailableError instead of hanging", async () => {
    const port = await freePort(); // nothing listens there
    const q = new BullMqJobQueue({ redisUrl: `redis://127.0.0.1:${port}`, prefix: "test-jobs-unreachable" });
    queues.push(q);
    await expect(q.enqueue("catalog.reindex", { source: "x" }, { jobId: "test.unreachable" })).rejects.toBeInstanceOf(
      QueueUnavailableError,
    );
    // And again: a failed first attempt leaves nothing stuck behind.
    await expect(q.run("catalog.reindex", { source: "x" }, { jobId: "test.unreachable", timeoutMs: 1000 })).rejects.toBeInstanceOf(
      QueueUnavailableError,
    );
    expect(await q.isReady()).toBe(false);
  }, 10_000);

  it("a worker whose Redis does not answer still closes (SIGTERM does not hang)", async () => {
    const port = await freePort(); // nothing listens there
    const q = new BullMqJobQueue({ redisUrl: `redis://127.0.0.1:${port}`, prefix: "test-jobs-unreachable" });
    await q.work({ "catalog.reindex": async () => ({ read: 1, indexed: 1, skipped: 0, durationMs: 0 }) });
    await expect(q.isReady()).resolves.toBe(false);
    await expect(q.close()).resolves.toBeUndefined();
  }, 10_000);

  it("close drains the active job and stores its result in Redis for the next process", async () => {
    const p = prefix("drain");
    const q = open({ prefix: p });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    await q.work({
      "catalog.reindex": async () => {
        started();
        await gate;
        return { read: 7, indexed: 7, skipped: 0, durationMs: 1 };
      },
    });
    await q.enqueue("catalog.reindex", { source: "drain" }, { jobId: "test.drain" });
    await running;
    const closing = q.close();
    setTimeout(release, 100);
    await closing;

    const next = open({ prefix: p });
    expect(await next.inspect("test.drain")).toMatchObject({ state: "completed", attemptsMade: 1, result: { read: 7 } });
    await expect(next.waitFor("catalog.reindex", "test.drain", { timeoutMs: 1000 })).resolves.toMatchObject({ read: 7 });
  });

  it("keeps its keys under the prefix, with readable job ids", async () => {
    const p = prefix("keys");
    const q = open({ prefix: p });
    await q.work({ "catalog.reindex": async () => ({ read: 1, indexed: 1, skipped: 0, durationMs: 0 }) });
    await q.run("catalog.reindex", { source: "k" }, { jobId: "catalog.reindex:file:/tmp/x", timeoutMs: 10_000 });
    expect(toBullJobId("catalog.reindex:file:/tmp/x")).toBe("id-catalog.reindex%3Afile%3A/tmp/x");
    expect(await countKeys(p)).toBeGreaterThan(0);
    await deleteKeys([p]);
    expect(await countKeys(p)).toBe(0);
  });
});
