import { JOB_NAMES, type JobName } from "@app/contracts";
import type { JobHandlers, JobQueue } from "./job-queue.ts";
import { checkHandlers } from "./run-handler.ts";

/**
 * Which process runs which job, decided here for every service. With REDIS_URL the worker
 * service runs every job (it consumes BullMQ and refuses to start without a handler for each
 * name), and the gateway and the services only enqueue. Without Redis there is no worker: a
 * process runs the jobs of the services it holds, in-process (the gateway those of the services
 * it mounts, a service on its own its own). Each service says which jobs are its own
 * (`searchJobs`, `uploadJobs`); this module says where they run.
 */
export type JobRunner = "worker" | "service";

/** Whether a process of this kind runs jobs from a queue of this kind. */
export function runsJobsHere(runner: JobRunner, queueKind: JobQueue["kind"]): boolean {
  return runner === "worker" || queueKind === "in-process";
}

/** Start running `handlers` from `queue` when this process is where they run; the worker needs them all. */
export async function serveJobs(
  queue: JobQueue,
  handlers: Partial<JobHandlers>,
  opts: { runner: JobRunner; concurrency?: number },
): Promise<boolean> {
  if (opts.runner === "worker") assertAllHandlers(handlers);
  if (!runsJobsHere(opts.runner, queue.kind)) return false;
  await queue.work(handlers, { concurrency: opts.concurrency });
  return true;
}

/** Refuse to start unless every job name of the contracts union has its handler (and nothing else). */
export function assertAllHandlers(handlers: Partial<JobHandlers>): asserts handlers is JobHandlers {
  checkHandlers(handlers);
  const missing = JOB_NAMES.filter((name: JobName) => typeof handlers[name] !== "function");
  if (missing.length > 0) {
    throw new Error(`the worker has no handler for job ${missing.join(", ")}: every job name in @app/contracts needs exactly one`);
  }
}
