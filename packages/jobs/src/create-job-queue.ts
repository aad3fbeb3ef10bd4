import type { Config, Logger } from "@app/platform";
import { BullMqJobQueue, type BullMqJobQueueOptions } from "./bullmq-queue.ts";
import { InProcessJobQueue } from "./in-process-queue.ts";
import type { JobQueue } from "./job-queue.ts";

export type JobQueueConfig = Pick<Config, "REDIS_URL" | "QUEUE_PREFIX" | "WORKER_CONCURRENCY" | "JOB_ATTEMPTS" | "JOB_BACKOFF_MS">;

/** The kind of queue `createJobQueue` makes from this config (a process deciding whether it runs jobs asks before it has one). */
export function queueKindFor(config: Pick<Config, "REDIS_URL">): JobQueue["kind"] {
  return config.REDIS_URL ? "bullmq" : "in-process";
}

/**
 * The one place the JobQueue implementation is chosen: BullMQ on Redis when REDIS_URL is set,
 * otherwise jobs run inside this process. `overrides` are for tests (short locks, fast retries).
 */
export function createJobQueue(
  config: JobQueueConfig,
  opts: { logger?: Logger; overrides?: Partial<Omit<BullMqJobQueueOptions, "redisUrl" | "prefix" | "logger">> } = {},
): JobQueue {
  if (config.REDIS_URL) {
    return new BullMqJobQueue({
      concurrency: config.WORKER_CONCURRENCY,
      attempts: config.JOB_ATTEMPTS,
      backoffMs: config.JOB_BACKOFF_MS,
      ...opts.overrides,
      redisUrl: config.REDIS_URL,
      prefix: config.QUEUE_PREFIX,
      ...(opts.logger && { logger: opts.logger }),
    });
  }
  return new InProcessJobQueue({
    concurrency: config.WORKER_CONCURRENCY,
    attempts: config.JOB_ATTEMPTS,
    backoffMs: config.JOB_BACKOFF_MS,
    ...opts.overrides,
  });
}
