import type { JobData, JobName, JobResult } from "@app/contracts";
import type { Logger } from "@app/platform";
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job as BullJob } from "bullmq";
import { Redis } from "ioredis";
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
import { checkHandlers, decodeFailure, encodeFailure, errorMessage, parseJob, parseResult, runHandler } from "./run-handler.ts";

export interface BullMqJobQueueOptions {
  /** redis:// or rediss:// URL (REDIS_URL). */
  redisUrl: string;
  /** Key prefix for every key of the queue (QUEUE_PREFIX); tests use one per run. */
  prefix: string;
  /** One queue carries every job name; the worker dispatches on the name. */
  queueName?: string;
  /** Jobs this process runs at once (WORKER_CONCURRENCY). */
  concurrency?: number;
  /** Tries per job, the first included. */
  attempts?: number;
  /** First retry delay; doubles with each further try. */
  backoffMs?: number;
  /** Completed jobs kept so that retried requests collect results (seconds, count). */
  keepCompleted?: { age: number; count: number };
  /** Failed jobs kept for inspection. */
  keepFailed?: { count: number };
  /** A worker that stops renewing its lock for this long is presumed dead and its job handed on. */
  lockDurationMs?: number;
  /** How often workers look for jobs whose worker died. */
  stalledIntervalMs?: number;
  /** How many times a job may be handed on after its worker died before it counts as failed. */
  maxStalledCount?: number;
  /** How long a producer waits for Redis before answering QueueUnavailableError. */
  unavailableAfterMs?: number;
  logger?: Logger;
}

interface Waiter {
  jobId: string;
  settle(state: JobInfo | undefined): void;
  fail(err: Error): void;
}

/**
 * Custom BullMQ ids may not be integers nor contain ':' (reserved for its repeat keys), while
 * our ids are `name:hash:hash`. Escape injectively and keep them readable in Redis.
 */
export function toBullJobId(jobId: string): string {
  return `id-${jobId.replace(/[%:]/g, (c) => (c === "%" ? "%25" : "%3A"))}`;
}

/** Wait for `p`, but no longer than `ms`. */
async function within(p: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

function mapState(state: string): JobState | undefined {
  switch (state) {
    case "completed":
    case "failed":
    case "active":
    case "delayed":
    case "waiting":
      return state;
    case "prioritized":
    case "waiting-children":
      return "waiting";
    default:
      return undefined;
  }
}

/**
 * The JobQueue port on BullMQ. Producers use their own connection that never queues commands
 * while Redis is away, so `enqueue` answers QueueUnavailableError within `unavailableAfterMs`
 * instead of hanging; workers and the event reader reconnect forever and carry on where they
 * stopped (a job whose worker died is handed to another one once its lock runs out).
 */
export class BullMqJobQueue implements JobQueue {
  readonly kind = "bullmq" as const;
  private readonly opts: Required<Omit<BullMqJobQueueOptions, "logger">>;
  private readonly logger: Logger | undefined;
  private readonly producer: Redis;
  private queue: Queue | undefined;
  private queueReady: Promise<Queue> | undefined;
  private events: Promise<QueueEvents> | undefined;
  private worker: Worker | undefined;
  private handlers: Partial<JobHandlers> = {};
  private readonly waiters = new Set<Waiter>();
  private closing: Promise<void> | undefined;
  private connecting: Promise<void> | undefined;
  /** Set once the worker has drained: a wait that starts later reads the final state itself. */
  private waitsClosed = false;

  constructor(opts: BullMqJobQueueOptions) {
    this.opts = {
      queueName: "jobs",
      concurrency: 2,
      attempts: 3,
      backoffMs: 1000,
      keepCompleted: { age: 7 * 24 * 3600, count: 100_000 },
      keepFailed: { count: 10_000 },
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      maxStalledCount: 2,
      unavailableAfterMs: 1000,
      ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
    } as Required<Omit<BullMqJobQueueOptions, "logger">>;
    this.logger = opts.logger;
    this.producer = new Redis(this.opts.redisUrl, {
      lazyConnect: true,
      // Fail, don't queue, while disconnected: an upload answers 503 now rather than hang.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: this.opts.unavailableAfterMs,
      commandTimeout: Math.max(2 * this.opts.unavailableAfterMs, 2000),
      retryStrategy: (times) => Math.min(100 * times, 2000),
    });
    this.producer.on("error", (err) => this.logger?.debug({ err: errorMessage(err) }, "job producer connection error"));
  }

  async work(handlers: Partial<JobHandlers>, opts: WorkOptions = {}): Promise<void> {
    if (this.closing) throw new QueueUnavailableError("job queue is closed");
    checkHandlers(handlers);
    this.handlers = { ...this.handlers, ...handlers };
    if (this.worker) {
      if (opts.concurrency) this.worker.concurrency = opts.concurrency;
      return;
    }
    this.worker = new Worker(this.opts.queueName, (job) => this.process(job), {
      // Workers block on Redis and must outlive its restarts: retry every command, forever.
      connection: { url: this.opts.redisUrl, maxRetriesPerRequest: null },
      prefix: this.opts.prefix,
      concurrency: opts.concurrency ?? this.opts.concurrency,
      lockDuration: this.opts.lockDurationMs,
      stalledInterval: this.opts.stalledIntervalMs,
      maxStalledCount: this.opts.maxStalledCount,
    });
    this.worker.on("error", (err) => this.logger?.warn({ err: errorMessage(err) }, "job worker error"));
    this.worker.on("failed", (job, err) =>
      this.logger?.warn({ jobId: job?.id, name: job?.name, attempt: job?.attemptsMade, err: err.message }, "job attempt failed"),
    );
  }

  async enqueue<N extends JobName>(name: N, data: JobData<N>, { jobId }: EnqueueOptions): Promise<void> {
    const job = parseJob(name, data);
    const queue = await this.producerQueue();
    const id = toBullJobId(jobId);
    try {
      // An existing id (waiting, running, done or failed) is left as it is: BullMQ adds nothing.
      await queue.add(name, job.data, { jobId: id });
      if ((await queue.getJobState(id)) === "failed") await this.retryFailed(queue, id);
    } catch (err) {
      throw new QueueUnavailableError(`job queue unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }

  async waitFor<N extends JobName>(name: N, jobId: string, { timeoutMs, onProgress }: WaitOptions): Promise<JobResult<N>> {
    // A wait begun before close() still gets its answer: only new enqueues are refused.
    const events = await this.queueEvents(true);
    const queue = await this.producerQueue(true);
    const id = toBullJobId(jobId);
    const info = await new Promise<JobInfo | undefined>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onCompleted = () => void this.readOrUnavailable(queue, id).then(waiter.settle, waiter.fail);
      const onFailed = onCompleted;
      const onProgressEvent = (args: { jobId: string; data: unknown }) => {
        if (args.jobId === id && args.data && typeof args.data === "object") onProgress?.(args.data as Record<string, unknown>);
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        events.off(`completed:${id}` as "completed", onCompleted);
        events.off(`failed:${id}` as "failed", onFailed);
        events.off("progress", onProgressEvent);
      };
      const waiter: Waiter = {
        jobId: id,
        settle: (state) => {
          if (state && state.state !== "completed" && state.state !== "failed") return;
          cleanup();
          resolve(state);
        },
        fail: (err) => {
          cleanup();
          reject(err);
        },
      };
      this.waiters.add(waiter);
      // BullMQ also emits every event under `<event>:<jobId>`, which its typings do not list.
      events.on(`completed:${id}` as "completed", onCompleted);
      events.on(`failed:${id}` as "failed", onFailed);
      if (onProgress) events.on("progress", onProgressEvent);
      timer = setTimeout(() => waiter.fail(new JobTimeoutError(jobId, timeoutMs)), timeoutMs);
      // Listening first, then reading: a job that ended before we listened is seen here.
      this.readOrUnavailable(queue, id).then((state) => {
        const final = !state || state.state === "completed" || state.state === "failed";
        if (this.waitsClosed && !final) waiter.fail(new QueueUnavailableError("job queue closed while waiting"));
        else waiter.settle(state);
      }, waiter.fail);
    });
    if (!info || info.name !== name) throw new JobFailedError(jobId, "no such job");
    if (info.state === "failed") throw new JobFailedError(jobId, info.failedReason ?? "failed", info.failureCode);
    try {
      return parseResult(name, info.result) as JobResult<N>;
    } catch (err) {
      throw new JobFailedError(jobId, errorMessage(err));
    }
  }

  async run<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions & WaitOptions): Promise<JobResult<N>> {
    await this.enqueue(name, data, opts);
    return this.waitFor(name, opts.jobId, opts);
  }

  async schedule<N extends JobName>(schedulerId: string, name: N, data: JobData<N>, opts: ScheduleOptions): Promise<void> {
    const job = parseJob(name, data);
    const queue = await this.producerQueue();
    try {
      // One scheduler per id in Redis: every replica upserting it leaves one, and each of its
      // runs is one job that exactly one worker takes.
      await queue.upsertJobScheduler(
        schedulerId,
        { every: opts.everyMs },
        {
          name,
          data: job.data,
          opts: {
            attempts: opts.attempts ?? this.opts.attempts,
            backoff: { type: "exponential", delay: opts.backoffMs ?? this.opts.backoffMs },
            removeOnComplete: this.opts.keepCompleted,
            removeOnFail: this.opts.keepFailed,
          },
        },
      );
    } catch (err) {
      throw new QueueUnavailableError(`job queue unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }

  async unschedule(schedulerId: string): Promise<void> {
    const queue = await this.producerQueue();
    try {
      await queue.removeJobScheduler(schedulerId);
    } catch (err) {
      throw new QueueUnavailableError(`job queue unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }

  async inspect(jobId: string): Promise<JobInfo | undefined> {
    const info = await this.readOrUnavailable(await this.producerQueue(), toBullJobId(jobId));
    return info && { ...info, id: jobId };
  }

  async isReady(): Promise<boolean> {
    return !this.closing && (await this.ping());
  }

  /**
   * Drain: the worker takes no new job and lets its active ones finish (their results are
   * stored), waits still pending get their job's final state, then every connection closes.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // With Redis away nothing can be drained to it (a finished job could not store its result)
      // and a graceful close would wait for Redis forever: let go at once. Jobs cut off this way
      // are handed to another worker when their lock runs out.
      const redisAnswers = await this.ping();
      await this.worker?.close(!redisAnswers);
      this.waitsClosed = true;
      for (const w of [...this.waiters]) {
        const queue = this.queue;
        const info = queue ? await this.read(queue, w.jobId).catch(() => undefined) : undefined;
        if (info && (info.state === "completed" || info.state === "failed")) w.settle(info);
        else w.fail(new QueueUnavailableError("job queue closed while waiting"));
      }
      const events = await this.events?.catch(() => undefined);
      // ioredis never reports the end of a connection that is between reconnect attempts, so
      // closing one while Redis is away would wait forever: bound it, the sockets are gone anyway.
      const closeEvents = events?.close().catch(() => undefined);
      await (redisAnswers ? closeEvents : within(closeEvents, 1000));
      await within(
        this.queue?.close().catch(() => undefined),
        redisAnswers ? 10_000 : 1000,
      );
      this.producer.disconnect();
    })();
    return this.closing;
  }

  private async process(job: BullJob): Promise<unknown> {
    try {
      return await runHandler(this.handlers, job.name, job.data, {
        progress: (p) => job.updateProgress(p),
      });
    } catch (err) {
      // BullMQ keeps one string per failure: a code travels in it as a JobFailure (JSON), read back in read().
      if (err instanceof UnrecoverableJobError) throw new UnrecoverableError(encodeFailure(err));
      throw err;
    }
  }

  /** An id whose job failed for good is run again from a clean slate when it is enqueued anew. */
  private async retryFailed(queue: Queue, id: string): Promise<void> {
    const job = await queue.getJob(id);
    try {
      await job?.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
    } catch (err) {
      // A concurrent enqueue retried it first; anything else is real.
      if ((await queue.getJobState(id)) === "failed") throw err;
    }
  }

  private async ping(): Promise<boolean> {
    try {
      await this.producerQueue(true);
      return (await this.producer.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  private async readOrUnavailable(queue: Queue, id: string): Promise<JobInfo | undefined> {
    try {
      return await this.read(queue, id);
    } catch (err) {
      throw new QueueUnavailableError(`job queue unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }

  private async read(queue: Queue, id: string): Promise<JobInfo | undefined> {
    // State first: a job that finishes between the two reads then shows as unfinished (and the
    // wait goes on), never as finished without its result.
    const state = mapState(await queue.getJobState(id));
    if (!state) return undefined;
    const job = await queue.getJob(id);
    if (!job) return undefined;
    const failure = state === "failed" ? decodeFailure(job.failedReason ?? "failed") : undefined;
    return {
      id,
      name: job.name,
      state,
      attemptsMade: job.attemptsMade,
      ...(failure && { failedReason: failure.message }),
      ...(failure?.code && { failureCode: failure.code }),
      ...(state === "completed" && { result: job.returnvalue }),
    };
  }

  /** The producer's Queue, once Redis answers; QueueUnavailableError after `unavailableAfterMs` otherwise. */
  private async producerQueue(evenWhileClosing = false): Promise<Queue> {
    if (this.closing && !(evenWhileClosing && this.producer.status === "ready")) throw new QueueUnavailableError("job queue is closed");
    await this.producerConnected();
    this.queueReady ??= this.createQueue();
    try {
      return await this.queueReady;
    } catch (err) {
      throw new QueueUnavailableError(`job queue unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }

  private async createQueue(): Promise<Queue> {
    const queue = new Queue(this.opts.queueName, {
      connection: this.producer,
      prefix: this.opts.prefix,
      defaultJobOptions: {
        attempts: this.opts.attempts,
        backoff: { type: "exponential", delay: this.opts.backoffMs },
        removeOnComplete: this.opts.keepCompleted,
        removeOnFail: this.opts.keepFailed,
      },
    });
    queue.on("error", (err) => this.logger?.debug({ err: errorMessage(err) }, "job queue error"));
    try {
      await queue.waitUntilReady();
      this.queue = queue;
      return queue;
    } catch (err) {
      // BullMQ keeps a failed start for good: forget this one so the next call builds a new one.
      this.queueReady = undefined;
      await queue.close().catch(() => undefined);
      throw err;
    }
  }

  private producerConnected(): Promise<void> {
    const redis = this.producer;
    if (redis.status === "ready") return Promise.resolve();
    // One pending wait shared by every caller, however many requests arrive while Redis is away.
    this.connecting ??= new Promise<void>((resolve, reject) => {
      if (redis.status === "wait" || redis.status === "end") redis.connect().catch(() => undefined);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        redis.off("ready", onReady);
        reject(new QueueUnavailableError(`job queue unavailable: Redis did not answer within ${this.opts.unavailableAfterMs} ms`));
      }, this.opts.unavailableAfterMs);
      redis.once("ready", onReady);
    }).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /**
   * One event reader per queue, started from the stream's end as it is now: events that arrive
   * before its first read are still delivered, so no wait misses the end of its job.
   */
  private queueEvents(evenWhileClosing = false): Promise<QueueEvents> {
    if (this.closing && !this.events && !evenWhileClosing) return Promise.reject(new QueueUnavailableError("job queue is closed"));
    this.events ??= (async () => {
      const queue = await this.producerQueue(evenWhileClosing);
      const last = await this.producer.xrevrange(queue.keys.events!, "+", "-", "COUNT", 1);
      const events = new QueueEvents(this.opts.queueName, {
        connection: { url: this.opts.redisUrl, maxRetriesPerRequest: null },
        prefix: this.opts.prefix,
        lastEventId: last[0]?.[0] ?? "0-0",
      });
      events.on("error", (err) => this.logger?.debug({ err: errorMessage(err) }, "job events error"));
      await events.waitUntilReady();
      return events;
    })().catch((err: unknown) => {
      this.events = undefined;
      throw err instanceof QueueUnavailableError
        ? err
        : new QueueUnavailableError(`job queue unavailable: ${errorMessage(err)}`, { cause: err });
    });
    return this.events;
  }
}
