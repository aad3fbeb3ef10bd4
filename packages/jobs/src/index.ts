export * from "./job-queue.ts";
export * from "./in-process-queue.ts";
export * from "./bullmq-queue.ts";
export * from "./create-job-queue.ts";
export { JOB_RESULT_SCHEMAS, checkHandlers } from "./run-handler.ts";
export { assertAllHandlers, runsJobsHere, serveJobs, type JobRunner } from "./job-placement.ts";
