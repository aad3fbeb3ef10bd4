import { z } from "zod";
import { MaskType } from "./upload.ts";

/** Every background job: one discriminated union of names and payloads, shared by producers and workers. */
const hash = z.string().regex(/^[0-9a-f]{64}$/);

export const MaskDeriveJob = z.object({
  name: z.literal("mask.derive"),
  data: z.object({ originalHash: hash, maskHash: hash }),
});

export const CatalogReindexJob = z.object({
  name: z.literal("catalog.reindex"),
  /**
   * `force` swaps in a catalog even when it is empty or less than half the size of the indexed one;
   * `full` reads a registry whole (every pack and its versions), not only what changed since the last read.
   */
  data: z.object({ source: z.string().min(1), force: z.boolean().optional(), full: z.boolean().optional() }),
});

export const Job = z.discriminatedUnion("name", [MaskDeriveJob, CatalogReindexJob]);

export const MaskDeriveResult = z.object({
  maskType: MaskType,
  paint: z.string(),
  painted: z.string(),
});

export const ReindexProgress = z.object({
  read: z.number().int(),
  indexed: z.number().int(),
  skipped: z.number().int(),
});

export const CatalogReindexResult = ReindexProgress.extend({
  durationMs: z.number(),
});

/**
 * Why a job failed for good when retrying cannot help and the cause is its input, so a producer
 * can answer the client 4xx: an image that does not decode, an original that is not stored, a
 * payload or result outside this contract.
 */
export const JobErrorCode = z.enum(["invalid_image", "original_not_found", "invalid_job"]);

/** A job's failure as it crosses the queue (BullMQ keeps it, as JSON, in the job's failedReason). */
export const JobFailure = z.object({ code: JobErrorCode, message: z.string() });

export type Job = z.infer<typeof Job>;
export type JobErrorCode = z.infer<typeof JobErrorCode>;
export type JobFailure = z.infer<typeof JobFailure>;
export type JobName = Job["name"];
export type JobData<N extends JobName> = Extract<Job, { name: N }>["data"];
export type JobResults = {
  "mask.derive": z.infer<typeof MaskDeriveResult>;
  "catalog.reindex": z.infer<typeof CatalogReindexResult>;
};
export type JobResult<N extends JobName> = JobResults[N];
export type ReindexProgress = z.infer<typeof ReindexProgress>;
export const JOB_NAMES = Job.options.map<JobName>((o) => o.shape.name.value);

/** Job ids derive from content, so enqueuing the same work twice is a no-op. */
export const jobIds = {
  maskDerive: (d: JobData<"mask.derive">) => `mask.derive:${d.originalHash}:${d.maskHash}`,
};
