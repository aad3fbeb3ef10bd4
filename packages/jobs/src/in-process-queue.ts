import type { JobData, JobName, JobResult } from "@app/contracts";
import {
  JobFailedError,
  JobTimeoutError,
  type EnqueueOptions,
  type JobHandlers,
  type JobQueue,
  type WaitOptions,
} from "./job-queue.ts";

interface Entry {
  name: JobName;
  done: Promise<unknown>;
  settled: boolean;
  listeners: Set<(p: Record<string, unknown>) => void>;
}

/** How many finished jobs are remembered so that a retried request collects its result at once. */
const FINISHED_KEPT = 10_000;

/**
 * The embedded JobQueue: jobs run in this process with bounded concurrency. Job ids dedupe
 * while a job is queued, running, or recently done; a failed job is forgotten so it can be retried.
 */
export class InProcessJobQueue implements JobQueue {
  readonly kind = "in-process" as const;
  private handlers: Partial<JobHandlers> = {};
  private readonly entries = new Map<string, Entry>();
  private readonly pending: (() => void)[] = [];
  private running = 0;
  private concurrency = 2;
  private closed = false;

  async work(handlers: Partial<JobHandlers>, opts: { concurrency?: number } = {}): Promise<void> {
    this.handlers = { ...this.handlers, ...handlers };
    if (opts.concurrency) this.concurrency = opts.concurrency;
  }

  async enqueue<N extends JobName>(name: N, data: JobData<N>, { jobId }: EnqueueOptions): Promise<void> {
    if (this.closed) throw new Error("job queue is closed");
    if (this.entries.has(jobId)) return;
    const handler = this.handlers[name] as JobHandlers[N] | undefined;
    if (!handler) throw new Error(`no handler registered for job ${name}`);
    const listeners = new Set<(p: Record<string, unknown>) => void>();
    const entry: Entry = { name, settled: false, listeners, done: Promise.resolve() };
    entry.done = this.slot()
      .then(() =>
        handler(data, {
          progress: async (p) => listeners.forEach((l) => l(p)),
        }),
      )
      .finally(() => {
        entry.settled = true;
        this.release();
      });
    entry.done.then(
      () => this.forgetOldest(),
      () => this.entries.delete(jobId),
    );
    this.entries.set(jobId, entry);
  }

  async waitFor<N extends JobName>(name: N, jobId: string, { timeoutMs, onProgress }: WaitOptions): Promise<JobResult<N>> {
    const entry = this.entries.get(jobId);
    if (!entry || entry.name !== name) throw new JobFailedError(jobId, "no such job");
    if (onProgress) entry.listeners.add(onProgress);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new JobTimeoutError(jobId, timeoutMs)), timeoutMs);
    });
    try {
      return (await Promise.race([entry.done, timeout])) as JobResult<N>;
    } catch (err) {
      if (err instanceof JobTimeoutError) throw err;
      throw new JobFailedError(jobId, err instanceof Error ? err.message : String(err));
    } finally {
      clearTimeout(timer);
      if (onProgress) entry.listeners.delete(onProgress);
    }
  }

  async run<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions & WaitOptions): Promise<JobResult<N>> {
    await this.enqueue(name, data, opts);
    return this.waitFor(name, opts.jobId, opts);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.entries.values()].map((e) => e.done));
  }

  private slot(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.pending.push(() => { this.running++; resolve(); }));
  }

  private release(): void {
    this.running--;
    this.pending.shift()?.();
  }

  private forgetOldest(): void {
    if (this.entries.size <= FINISHED_KEPT) return;
    for (const [id, e] of this.entries) {
      if (e.settled) { this.entries.delete(id); return; }
    }
  }
}
