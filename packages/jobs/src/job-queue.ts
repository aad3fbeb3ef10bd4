import type { JobData, JobName, JobResult } from "@app/contracts";

/** What a handler may report while it runs (reindex counts, for instance). */
export interface JobContext {
  progress(p: Record<string, unknown>): Promise<void>;
}

export type JobHandler<N extends JobName> = (data: JobData<N>, ctx: JobContext) => Promise<JobResult<N>>;
export type JobHandlers = { [N in JobName]: JobHandler<N> };

export interface EnqueueOptions {
  /** Derived from the job's content: enqueuing an id that exists (waiting, running or done) adds nothing. */
  jobId: string;
}

export interface WaitOptions {
  timeoutMs: number;
  onProgress?: (p: Record<string, unknown>) => void;
}

/** The job did not finish in time; it goes on running and a later wait can still collect it. */
export class JobTimeoutError extends Error {
  constructor(readonly jobId: string, timeoutMs: number) {
    super(`job ${jobId} did not finish within ${timeoutMs} ms`);
  }
}

/** The handler threw (after any retries). */
export class JobFailedError extends Error {
  constructor(readonly jobId: string, reason: string) {
    super(`job ${jobId} failed: ${reason}`);
  }
}

/** The queue's backend cannot take the job now (Redis down): producers answer 503 at once. */
export class QueueUnavailableError extends Error {}

/**
 * The JobQueue port. Two implementations: the in-process runner (embedded default) and
 * BullMQ on Redis (REDIS_URL). Both pass the same conformance suite.
 */
export interface JobQueue {
  readonly kind: "in-process" | "bullmq";
  enqueue<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions): Promise<void>;
  waitFor<N extends JobName>(name: N, jobId: string, opts: WaitOptions): Promise<JobResult<N>>;
  /** Enqueue, then wait for the result. */
  run<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions & WaitOptions): Promise<JobResult<N>>;
  /** Start consuming: one handler per job name this process serves. */
  work(handlers: Partial<JobHandlers>, opts?: { concurrency?: number }): Promise<void>;
  /** Stop taking jobs, let running ones finish, close connections. */
  close(): Promise<void>;
}
