import type { JobData, JobErrorCode, JobName, JobResult } from "@app/contracts";

/** What a handler may report while it runs (reindex counts, for instance). */
export interface JobContext {
  progress(p: Record<string, unknown>): Promise<void>;
}

export type JobHandler<N extends JobName> = (data: JobData<N>, ctx: JobContext) => Promise<JobResult<N>>;
export type JobHandlers = { [N in JobName]: JobHandler<N> };

export interface EnqueueOptions {
  /**
   * Derived from the job's content: enqueuing an id that exists (waiting, running or done) adds
   * nothing. An id whose job failed for good is tried again.
   */
  jobId: string;
}

export interface WaitOptions {
  timeoutMs: number;
  onProgress?: (p: Record<string, unknown>) => void;
}

/** A job run again and again on a fixed interval (the catalog refresh). */
export interface ScheduleOptions {
  /** Interval between runs; the first run is due at once. */
  everyMs: number;
  /** Tries per run, the first included (default: the queue's). */
  attempts?: number;
  /** First retry delay of a run; doubles with each further try (default: the queue's). */
  backoffMs?: number;
}

export interface WorkOptions {
  /** How many jobs this process runs at once. */
  concurrency?: number;
}

export type JobState = "waiting" | "active" | "delayed" | "completed" | "failed";

/** What an operator (or a test) can read about a job: a failure stays readable until the id is tried again. */
export interface JobInfo {
  id: string;
  name: string;
  state: JobState;
  /** Attempts that ended (in success or failure). */
  attemptsMade: number;
  failedReason?: string;
  /** Set when the handler gave up with a code (UnrecoverableJobError): the input's fault. */
  failureCode?: JobErrorCode;
  result?: unknown;
}

/** The job did not finish in time; it goes on running and a later wait can still collect it. */
export class JobTimeoutError extends Error {
  override name = "JobTimeoutError";
  constructor(
    readonly jobId: string,
    timeoutMs: number,
  ) {
    super(`job ${jobId} did not finish within ${timeoutMs} ms`);
  }
}

/**
 * The handler threw (after any retries), or there is no such job. `code` is set when the handler
 * gave up with one (UnrecoverableJobError): the job's input was at fault, and the producer may say so.
 */
export class JobFailedError extends Error {
  override name = "JobFailedError";
  constructor(
    readonly jobId: string,
    readonly reason: string,
    readonly code?: JobErrorCode,
  ) {
    super(`job ${jobId} failed: ${reason}`);
  }
}

/** The queue's backend cannot take the job now (Redis down, queue closed): producers answer 503 at once. */
export class QueueUnavailableError extends Error {
  override name = "QueueUnavailableError";
}

/** A job name or payload that does not match the contracts union: a caller's bug, never retried. */
export class InvalidJobError extends Error {
  override name = "InvalidJobError";
}

/**
 * Thrown by a handler when trying again cannot help: the job fails at once instead of spending
 * its retries. With a code (an image that does not decode, say: the client's input), the code
 * reaches the producer's JobFailedError, through either queue.
 */
export class UnrecoverableJobError extends Error {
  override name = "UnrecoverableJobError";
  constructor(
    message: string,
    readonly code?: JobErrorCode,
  ) {
    super(message);
  }
}

/**
 * The JobQueue port. Two implementations: the in-process runner (embedded default) and
 * BullMQ on Redis (REDIS_URL). Both pass the same conformance suite.
 */
export interface JobQueue {
  readonly kind: "in-process" | "bullmq";
  /** Throws InvalidJobError for a payload outside the contract, QueueUnavailableError when the backend is down. */
  enqueue<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions): Promise<void>;
  /** Throws JobFailedError (failed, or no such job) or JobTimeoutError (still running). */
  waitFor<N extends JobName>(name: N, jobId: string, opts: WaitOptions): Promise<JobResult<N>>;
  /** Enqueue, then wait for the result. */
  run<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions & WaitOptions): Promise<JobResult<N>>;
  /** Start consuming: one handler per job name this process serves. */
  work(handlers: Partial<JobHandlers>, opts?: WorkOptions): Promise<void>;
  /**
   * Run `name` with `data` every `everyMs`, starting now, under `schedulerId`. Scheduling the same
   * id again replaces it: however many processes schedule it, one run happens per interval
   * (in-process: this process's timer; BullMQ: one job scheduler in Redis, one worker per run).
   * A tick while the previous run is still going adds nothing.
   */
  schedule<N extends JobName>(schedulerId: string, name: N, data: JobData<N>, opts: ScheduleOptions): Promise<void>;
  /** Stop a schedule; runs already started finish. */
  unschedule(schedulerId: string): Promise<void>;
  /** The job's state, or undefined when the id is unknown (or long forgotten). */
  inspect(jobId: string): Promise<JobInfo | undefined>;
  /** Whether the backend answers now (for /readyz). */
  isReady(): Promise<boolean>;
  /** Stop taking jobs, let running ones finish, close connections. */
  close(): Promise<void>;
}
