import type { JobData, JobErrorCode, JobName, JobResult } from "@app/contracts";
import {
  JobFailedError,
  JobTimeoutError,
  QueueUnavailableError,
  UnrecoverableJobError,
  type EnqueueOptions,
  type JobHandlers,
  type JobInfo,
  type JobQueue,
  type JobState,
  type ScheduleOptions,
  type WaitOptions,
  type WorkOptions,
} from "./job-queue.ts";
import { checkHandlers, errorMessage, failureCode, parseJob, parseResult, runHandler } from "./run-handler.ts";

interface Entry {
  name: JobName;
  data: unknown;
  state: JobState;
  attemptsMade: number;
  failedReason?: string;
  failureCode?: JobErrorCode;
  result?: unknown;
  attempts: number;
  backoffMs: number;
  done: Promise<unknown>;
  listeners: Set<(p: Record<string, unknown>) => void>;
}

export interface InProcessJobQueueOptions {
  /** Jobs run at once (WORKER_CONCURRENCY). */
  concurrency?: number;
  /** Tries per job, the first included. */
  attempts?: number;
  /** First retry delay; doubles with each further try. */
  backoffMs?: number;
  /** Finished jobs remembered, so a retried request collects its result at once. */
  keepFinished?: number;
}

/**
 * The embedded JobQueue: jobs run in this process with bounded concurrency, retried with
 * exponential backoff. Job ids dedupe while a job is queued, running, or done (up to
 * `keepFinished` of them); a failed job stays inspectable until its id is enqueued again.
 */
export class InProcessJobQueue implements JobQueue {
  readonly kind = "in-process" as const;
  private handlers: Partial<JobHandlers> = {};
  private readonly entries = new Map<string, Entry>();
  private readonly pending: (() => void)[] = [];
  private running = 0;
  private concurrency: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly keepFinished: number;
  private closed = false;
  private readonly schedules = new Map<string, NodeJS.Timeout>();
  private scheduledRuns = 0;
  /** Retries waiting out their backoff: close() wakes them, so shutdown does not wait for the clock. */
  private readonly backoffs = new Set<() => void>();

  constructor(opts: InProcessJobQueueOptions = {}) {
    this.concurrency = opts.concurrency ?? 2;
    this.attempts = opts.attempts ?? 3;
    this.backoffMs = opts.backoffMs ?? 1000;
    this.keepFinished = opts.keepFinished ?? 10_000;
  }

  async work(handlers: Partial<JobHandlers>, opts: WorkOptions = {}): Promise<void> {
    checkHandlers(handlers);
    this.handlers = { ...this.handlers, ...handlers };
    if (opts.concurrency) this.concurrency = opts.concurrency;
  }

  async enqueue<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions): Promise<void> {
    this.add(name, data, opts.jobId, this.attempts, this.backoffMs);
  }

  async schedule<N extends JobName>(schedulerId: string, name: N, data: JobData<N>, opts: ScheduleOptions): Promise<void> {
    if (this.closed) throw new QueueUnavailableError("job queue is closed");
    parseJob(name, data);
    await this.unschedule(schedulerId);
    let lastJobId: string | undefined;
    const tick = () => {
      const last = lastJobId ? this.entries.get(lastJobId) : undefined;
      if (last && last.state !== "completed" && last.state !== "failed") return; // still running or retrying
      lastJobId = `${schedulerId}@${Date.now()}#${++this.scheduledRuns}`;
      try {
        this.add(name, data, lastJobId, opts.attempts ?? this.attempts, opts.backoffMs ?? this.backoffMs);
      } catch {
        // No handler in this process yet: the next tick tries again.
      }
    };
    // The timer does not keep the process alive: the schedule lives as long as what uses the queue.
    this.schedules.set(schedulerId, setInterval(tick, opts.everyMs).unref());
    tick();
  }

  async unschedule(schedulerId: string): Promise<void> {
    clearInterval(this.schedules.get(schedulerId));
    this.schedules.delete(schedulerId);
  }

  private add(name: JobName, data: unknown, jobId: string, attempts: number, backoffMs: number): void {
    if (this.closed) throw new QueueUnavailableError("job queue is closed");
    const job = parseJob(name, data);
    const existing = this.entries.get(jobId);
    if (existing && existing.state !== "failed") return;
    // Nothing in this process could ever run it: say so now rather than let the caller wait.
    if (!this.handlers[name]) throw new JobFailedError(jobId, `no handler registered for job ${name}`);
    const entry: Entry = existing ?? {
      name,
      data: job.data,
      state: "waiting",
      attemptsMade: 0,
      attempts,
      backoffMs,
      done: Promise.resolve(),
      listeners: new Set(),
    };
    entry.state = "waiting";
    entry.attemptsMade = 0;
    entry.failedReason = undefined;
    entry.failureCode = undefined;
    entry.done = this.execute(entry);
    // Waiters observe failures through their own handlers; this one keeps the rejection handled.
    entry.done.then(
      () => this.forgetOldest(),
      () => undefined,
    );
    this.entries.delete(jobId);
    this.entries.set(jobId, entry);
  }

  async waitFor<N extends JobName>(name: N, jobId: string, { timeoutMs, onProgress }: WaitOptions): Promise<JobResult<N>> {
    const entry = this.entries.get(jobId);
    if (!entry || entry.name !== name) throw new JobFailedError(jobId, "no such job");
    if (entry.state === "completed") return entry.result as JobResult<N>;
    if (entry.state === "failed") throw new JobFailedError(jobId, entry.failedReason ?? "failed", entry.failureCode);
    if (onProgress) entry.listeners.add(onProgress);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new JobTimeoutError(jobId, timeoutMs)), timeoutMs);
    });
    try {
      return (await Promise.race([entry.done, timeout])) as JobResult<N>;
    } catch (err) {
      if (err instanceof JobTimeoutError) throw err;
      throw new JobFailedError(jobId, errorMessage(err), failureCode(err));
    } finally {
      clearTimeout(timer);
      if (onProgress) entry.listeners.delete(onProgress);
    }
  }

  async run<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions & WaitOptions): Promise<JobResult<N>> {
    await this.enqueue(name, data, opts);
    return this.waitFor(name, opts.jobId, opts);
  }

  async inspect(jobId: string): Promise<JobInfo | undefined> {
    const e = this.entries.get(jobId);
    if (!e) return undefined;
    return {
      id: jobId,
      name: e.name,
      state: e.state,
      attemptsMade: e.attemptsMade,
      ...(e.failedReason !== undefined && { failedReason: e.failedReason }),
      ...(e.failureCode !== undefined && { failureCode: e.failureCode }),
      ...(e.state === "completed" && { result: e.result }),
    };
  }

  async isReady(): Promise<boolean> {
    return !this.closed;
  }

  /**
   * Takes no new jobs; queued, running and retrying ones all finish (nothing here outlives the
   * process). A retry waiting out its backoff is tried at once.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.backoffs) wake();
    for (const id of [...this.schedules.keys()]) await this.unschedule(id);
    await Promise.allSettled([...this.entries.values()].map((e) => e.done));
  }

  private async execute(entry: Entry): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      await this.slot();
      entry.state = "active";
      try {
        const result = await runHandler(this.handlers, entry.name, entry.data, {
          progress: async (p) => entry.listeners.forEach((l) => l(p)),
        });
        entry.attemptsMade = attempt;
        entry.result = parseResult(entry.name, result);
        entry.state = "completed";
        return entry.result;
      } catch (err) {
        entry.attemptsMade = attempt;
        entry.failedReason = errorMessage(err);
        entry.failureCode = failureCode(err);
        if (err instanceof UnrecoverableJobError || attempt >= entry.attempts) {
          entry.state = "failed";
          throw err;
        }
        entry.state = "delayed";
      } finally {
        this.release();
      }
      if (!this.closed) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            this.backoffs.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, entry.backoffMs * 2 ** (attempt - 1));
          this.backoffs.add(wake);
        });
      }
      entry.state = "waiting";
    }
  }

  private slot(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.pending.push(() => {
        this.running++;
        resolve();
      }),
    );
  }

  private release(): void {
    this.running--;
    // Concurrency may have been raised by work(): start as many waiting jobs as now fit.
    while (this.running < this.concurrency && this.pending.length > 0) this.pending.shift()?.();
  }

  private forgetOldest(): void {
    if (this.entries.size <= this.keepFinished) return;
    for (const [id, e] of this.entries) {
      if (e.state === "completed" || e.state === "failed") {
        this.entries.delete(id);
        return;
      }
    }
  }
}
