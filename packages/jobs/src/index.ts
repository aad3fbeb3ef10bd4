export * from "./job-queue.ts";
export * from "./in-process-queue.ts";
