import { randomBytes } from "node:crypto";
import type { JobResult } from "@app/contracts";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  InvalidJobError,
  JobFailedError,
  JobTimeoutError,
  QueueUnavailableError,
  UnrecoverableJobError,
  type JobHandlers,
  type JobQueue,
} from "../src/index.ts";

export interface ConformanceQueueOptions {
  concurrency: number;
  attempts: number;
  backoffMs: number;
}

export type MakeQueue = (opts: ConformanceQueueOptions) => JobQueue | Promise<JobQueue>;

type Reindex = JobResult<"catalog.reindex">;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Test handlers on the `catalog.reindex` job: its `source` says what the handler does
 * (`ok/…`, `fail/…`, `gate/…`), and every run is counted so re-runs are visible. The result
 * carries the run number, so a result served from storage differs from a fresh run.
 */
export class Harness {
  readonly runs = new Map<string, number>();
  readonly finished = new Set<string>();
  readonly allow = new Set<string>();
  private readonly gates = new Map<string, ReturnType<typeof deferred>>();
  private readonly starts = new Map<string, ReturnType<typeof deferred>>();
  private allReleased = false;
  active = 0;
  maxActive = 0;

  job(kind: string): { data: { source: string }; jobId: string } {
    const tag = randomBytes(6).toString("hex");
    return { data: { source: `${kind}/${tag}` }, jobId: `test.${kind}.${tag}` };
  }

  started(source: string): Promise<void> {
    return this.startOf(source).promise;
  }

  release(source: string): void {
    this.gateOf(source).resolve();
  }

  /** Opens every gate, also those of jobs that have not started yet. */
  releaseAll(): void {
    this.allReleased = true;
    for (const g of this.gates.values()) g.resolve();
  }

  handlers(): Partial<JobHandlers> {
    return {
      "catalog.reindex": async ({ source }, ctx) => {
        const run = (this.runs.get(source) ?? 0) + 1;
        this.runs.set(source, run);
        this.active++;
        this.maxActive = Math.max(this.maxActive, this.active);
        try {
          this.startOf(source).resolve();
          const kind = source.split("/")[0];
          if (kind === "fail") throw new Error(`boom ${source}`);
          if (kind === "fail-once" && run === 1) throw new Error(`first try fails ${source}`);
          if (kind === "fail-until-allowed" && !this.allow.has(source)) throw new Error(`not allowed yet ${source}`);
          if (kind === "unrecoverable") throw new UnrecoverableJobError(`hopeless ${source}`);
          if (kind === "client-error") throw new UnrecoverableJobError(`undecodable ${source}`, "invalid_image");
          if (kind === "bad-result") return { read: "many" } as unknown as Reindex;
          if (kind === "gate") await this.gateOf(source).promise;
          if (kind === "progress") {
            let released = false;
            void this.gateOf(source).promise.then(() => (released = true));
            for (let i = 1; !released; i++) {
              await ctx.progress({ read: i, indexed: i, skipped: 0 });
              await new Promise((r) => setTimeout(r, 20));
            }
          }
          this.finished.add(source);
          return { read: run, indexed: 1, skipped: 0, durationMs: 0 };
        } finally {
          this.active--;
        }
      },
    };
  }

  private startOf(source: string) {
    let d = this.starts.get(source);
    if (!d) this.starts.set(source, (d = deferred()));
    return d;
  }

  private gateOf(source: string) {
    let d = this.gates.get(source);
    if (!d) this.gates.set(source, (d = deferred()));
    if (this.allReleased) d.resolve();
    return d;
  }
}

const LONG = { timeoutMs: 20_000 };
const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

/** The behaviour every JobQueue promises, run against each implementation on its real backend. */
export function describeJobQueueConformance(name: string, makeQueue: MakeQueue): void {
  describe(`JobQueue conformance: ${name}`, () => {
    let h: Harness;
    let open: JobQueue[] = [];

    beforeEach(() => {
      h = new Harness();
    });

    afterEach(async () => {
      h.releaseAll();
      await Promise.all(open.map((q) => q.close()));
      open = [];
    });

    async function queue(opts: Partial<ConformanceQueueOptions> = {}): Promise<JobQueue> {
      const q = await makeQueue({ concurrency: 2, attempts: 3, backoffMs: 20, ...opts });
      open.push(q);
      await q.work(h.handlers());
      return q;
    }

    it("runs a job and returns the handler's result", async () => {
      const q = await queue();
      const { data, jobId } = h.job("ok");
      await expect(q.run("catalog.reindex", data, { jobId, ...LONG })).resolves.toEqual({ read: 1, indexed: 1, skipped: 0, durationMs: 0 });
      expect(await q.inspect(jobId)).toMatchObject({ id: jobId, name: "catalog.reindex", state: "completed", attemptsMade: 1 });
    });

    it("enqueuing the same id twice runs the job once", async () => {
      const q = await queue();
      const { data, jobId } = h.job("gate");
      await Promise.all([q.enqueue("catalog.reindex", data, { jobId }), q.enqueue("catalog.reindex", data, { jobId })]);
      await h.started(data.source);
      await q.enqueue("catalog.reindex", data, { jobId });
      h.release(data.source);
      expect(await q.waitFor("catalog.reindex", jobId, LONG)).toMatchObject({ read: 1 });
      expect(h.runs.get(data.source)).toBe(1);
    });

    it("concurrent runs of the same id both get the one result", async () => {
      const q = await queue();
      const { data, jobId } = h.job("ok");
      const results = await Promise.all(Array.from({ length: 5 }, () => q.run("catalog.reindex", data, { jobId, ...LONG })));
      for (const r of results) expect(r).toEqual({ read: 1, indexed: 1, skipped: 0, durationMs: 0 });
      expect(h.runs.get(data.source)).toBe(1);
    });

    it("running a completed id again returns the stored result without running it", async () => {
      const q = await queue();
      const { data, jobId } = h.job("ok");
      await q.run("catalog.reindex", data, { jobId, ...LONG });
      await expect(q.run("catalog.reindex", data, { jobId, ...LONG })).resolves.toMatchObject({ read: 1 });
      expect(h.runs.get(data.source)).toBe(1);
    });

    it("a handler that keeps failing ends in JobFailedError after every attempt, and the failure is inspectable", async () => {
      const q = await queue({ attempts: 3 });
      const { data, jobId } = h.job("fail");
      const err = await q.run("catalog.reindex", data, { jobId, ...LONG }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobFailedError);
      expect((err as JobFailedError).reason).toContain(`boom ${data.source}`);
      expect((err as JobFailedError).code, "a plain error is no client error").toBeUndefined();
      expect(h.runs.get(data.source)).toBe(3);
      const info = await q.inspect(jobId);
      expect(info).toMatchObject({ state: "failed", attemptsMade: 3 });
      expect(info?.failedReason).toContain("boom");
      // Waiting on it later reports the same failure at once.
      await expect(q.waitFor("catalog.reindex", jobId, LONG)).rejects.toBeInstanceOf(JobFailedError);
    });

    it("a failed attempt is retried and the retry's result is returned", async () => {
      const q = await queue({ attempts: 3 });
      const { data, jobId } = h.job("fail-once");
      await expect(q.run("catalog.reindex", data, { jobId, ...LONG })).resolves.toMatchObject({ read: 2 });
      expect(await q.inspect(jobId)).toMatchObject({ state: "completed", attemptsMade: 2 });
    });

    it("an id that failed for good is tried again when enqueued again", async () => {
      const q = await queue({ attempts: 1 });
      const { data, jobId } = h.job("fail-until-allowed");
      await expect(q.run("catalog.reindex", data, { jobId, ...LONG })).rejects.toBeInstanceOf(JobFailedError);
      expect(await q.inspect(jobId)).toMatchObject({ state: "failed", attemptsMade: 1 });
      h.allow.add(data.source);
      await expect(q.run("catalog.reindex", data, { jobId, ...LONG })).resolves.toMatchObject({ read: 2 });
      expect(h.runs.get(data.source)).toBe(2);
    });

    it("an UnrecoverableJobError fails the job without spending its retries", async () => {
      const q = await queue({ attempts: 3 });
      const { data, jobId } = h.job("unrecoverable");
      await expect(q.run("catalog.reindex", data, { jobId, ...LONG })).rejects.toThrow(/hopeless/);
      expect(h.runs.get(data.source)).toBe(1);
    });

    it("a client error (UnrecoverableJobError with a code) is tried once, and its code and message reach the producer", async () => {
      const q = await queue({ attempts: 3 });
      const { data, jobId } = h.job("client-error");
      const err = await q.run("catalog.reindex", data, { jobId, ...LONG }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobFailedError);
      expect((err as JobFailedError).code).toBe("invalid_image");
      expect((err as JobFailedError).reason).toBe(`undecodable ${data.source}`);
      expect(h.runs.get(data.source)).toBe(1);
      expect(await q.inspect(jobId)).toMatchObject({
        state: "failed",
        attemptsMade: 1,
        failureCode: "invalid_image",
        failedReason: `undecodable ${data.source}`,
      });
      // A later wait reads the same typed failure from the stored job.
      const again = await q.waitFor("catalog.reindex", jobId, LONG).catch((e: unknown) => e);
      expect(again).toMatchObject({ code: "invalid_image", reason: `undecodable ${data.source}` });
    });

    it("a result outside the contract fails the job", async () => {
      const q = await queue({ attempts: 3 });
      const { data, jobId } = h.job("bad-result");
      const err = await q.run("catalog.reindex", data, { jobId, ...LONG }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobFailedError);
      expect((err as JobFailedError).reason).toMatch(/does not match the contract/);
      expect((err as JobFailedError).code).toBe("invalid_job");
      expect(h.runs.get(data.source)).toBe(1);
    });

    it("a payload outside the contract is refused at enqueue", async () => {
      const q = await queue();
      await expect(q.enqueue("catalog.reindex", { source: "" }, { jobId: "test.bad-payload" })).rejects.toBeInstanceOf(InvalidJobError);
      await expect(q.enqueue("mask.derive", { originalHash: "not-a-hash", maskHash: HASH_B }, { jobId: "test.bad-hash" })).rejects.toThrow(
        /originalHash/,
      );
      expect(await q.inspect("test.bad-payload")).toBeUndefined();
    });

    it("a wait that times out throws JobTimeoutError while the job runs on, and a later wait collects it", async () => {
      const q = await queue();
      const { data, jobId } = h.job("gate");
      await expect(q.run("catalog.reindex", data, { jobId, timeoutMs: 150 })).rejects.toBeInstanceOf(JobTimeoutError);
      await h.started(data.source);
      expect(await q.inspect(jobId)).toMatchObject({ state: "active" });
      h.release(data.source);
      await expect(q.waitFor("catalog.reindex", jobId, LONG)).resolves.toMatchObject({ read: 1 });
      expect(h.runs.get(data.source)).toBe(1);
    });

    it("reports the handler's progress to the waiter", async () => {
      const q = await queue();
      const { data, jobId } = h.job("progress");
      const seen: Record<string, unknown>[] = [];
      const result = q.run("catalog.reindex", data, { jobId, ...LONG, onProgress: (p) => seen.push(p) });
      await vi.waitFor(() => expect(seen.length).toBeGreaterThan(0), { timeout: 10_000 });
      h.release(data.source);
      await expect(result).resolves.toMatchObject({ read: 1 });
      expect(seen[0]).toMatchObject({ read: expect.any(Number), indexed: expect.any(Number), skipped: 0 });
    });

    it("runs no more jobs at once than its concurrency", async () => {
      const q = await queue({ concurrency: 2 });
      const jobs = [h.job("gate"), h.job("gate"), h.job("gate")];
      for (const j of jobs) await q.enqueue("catalog.reindex", j.data, { jobId: j.jobId });
      await vi.waitFor(() => expect(h.active).toBe(2), { timeout: 10_000 });
      await new Promise((r) => setTimeout(r, 300));
      expect(h.maxActive).toBe(2);
      h.releaseAll();
      for (const j of jobs) await q.waitFor("catalog.reindex", j.jobId, LONG);
      expect(h.maxActive).toBe(2);
    });

    it("close lets an active job finish and hands its result to the waiter", async () => {
      const q = await queue();
      const { data, jobId } = h.job("gate");
      await q.enqueue("catalog.reindex", data, { jobId });
      await h.started(data.source);
      const result = q.waitFor("catalog.reindex", jobId, LONG);
      let closed = false;
      const closing = q.close().then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(closed).toBe(false);
      h.release(data.source);
      await closing;
      expect(h.finished.has(data.source)).toBe(true);
      await expect(result).resolves.toMatchObject({ read: 1 });
    });

    it("refuses jobs once closed", async () => {
      const q = await queue();
      await q.close();
      const { data, jobId } = h.job("ok");
      await expect(q.enqueue("catalog.reindex", data, { jobId })).rejects.toBeInstanceOf(QueueUnavailableError);
      expect(h.runs.size).toBe(0);
    });

    it("a job name without a handler is rejected", async () => {
      const q = await queue();
      const jobId = `test.mask.${randomBytes(6).toString("hex")}`;
      await expect(q.run("mask.derive", { originalHash: HASH_A, maskHash: HASH_B }, { jobId, ...LONG })).rejects.toThrow(
        /no handler registered for job mask.derive/,
      );
    });

    it("refuses a handler for a name outside the union", async () => {
      const q = await queue();
      await expect(q.work({ "catalog.reindx": async () => ({}) } as never)).rejects.toThrow(/no job named catalog.reindx/);
    });

    it("waiting on an unknown id fails at once", async () => {
      const q = await queue();
      await expect(q.waitFor("catalog.reindex", "test.never-enqueued", LONG)).rejects.toBeInstanceOf(JobFailedError);
      expect(await q.inspect("test.never-enqueued")).toBeUndefined();
    });
  });
}
