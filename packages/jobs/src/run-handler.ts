import { CatalogReindexResult, Job, JobFailure, JOB_NAMES, MaskDeriveResult, type JobErrorCode, type JobName } from "@app/contracts";
import { metrics } from "@app/platform";
import { InvalidJobError, UnrecoverableJobError, type JobContext, type JobHandlers } from "./job-queue.ts";

/** The result schema of each job name, so both sides of a queue check what crosses it. */
export const JOB_RESULT_SCHEMAS = {
  "mask.derive": MaskDeriveResult,
  "catalog.reindex": CatalogReindexResult,
} as const satisfies Record<JobName, unknown>;

function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`).join("; ");
}

/** Check a name and payload against the contracts union; returns the parsed payload. */
export function parseJob(name: string, data: unknown): Job {
  const parsed = Job.safeParse({ name, data });
  if (!parsed.success) throw new InvalidJobError(`invalid ${name} job: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

export function parseResult(name: JobName, result: unknown): unknown {
  const parsed = JOB_RESULT_SCHEMAS[name].safeParse(result);
  if (!parsed.success) throw new InvalidJobError(`${name} result does not match the contract: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** Refuse handlers for names outside the union, so a typo fails at start and not at the first job. */
export function checkHandlers(handlers: Partial<JobHandlers>): void {
  for (const [name, handler] of Object.entries(handlers)) {
    if (!JOB_NAMES.includes(name as JobName)) throw new TypeError(`no job named ${name} (known: ${JOB_NAMES.join(", ")})`);
    if (typeof handler !== "function") throw new TypeError(`handler for ${name} is not a function`);
  }
}

/**
 * One attempt of a job, the same for both queues: payload checked, handler found, result
 * checked, outcome and duration recorded. Errors that retrying cannot fix are marked unrecoverable.
 */
export async function runHandler(handlers: Partial<JobHandlers>, name: string, data: unknown, ctx: JobContext): Promise<unknown> {
  // Label only known names: a stray job name must not grow the metric's label set.
  const label = JOB_NAMES.includes(name as JobName) ? name : "unknown";
  const end = metrics.jobDuration.startTimer({ name: label });
  try {
    const job = parseJob(name, data);
    const handler = handlers[job.name] as ((d: unknown, c: JobContext) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableJobError(`no handler registered for job ${job.name}`);
    const result = parseResult(job.name, await handler(job.data, ctx));
    metrics.jobs.inc({ name: label, outcome: "completed" });
    return result;
  } catch (err) {
    metrics.jobs.inc({ name: label, outcome: "failed" });
    if (err instanceof InvalidJobError) throw new UnrecoverableJobError(err.message, "invalid_job");
    throw err;
  } finally {
    end();
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The code a failed attempt gave up with, if any. */
export function failureCode(err: unknown): JobErrorCode | undefined {
  return err instanceof UnrecoverableJobError ? err.code : undefined;
}

/** A failure as a job queue's backend keeps it (one string): the typed JobFailure, as JSON, when it has a code. */
export function encodeFailure(err: unknown): string {
  const code = failureCode(err);
  return code ? JSON.stringify({ code, message: errorMessage(err) } satisfies JobFailure) : errorMessage(err);
}

/** The other side of encodeFailure: a stored reason back to its message and code. */
export function decodeFailure(reason: string): { message: string; code?: JobErrorCode } {
  if (!reason.startsWith("{")) return { message: reason };
  try {
    const parsed = JobFailure.safeParse(JSON.parse(reason));
    if (parsed.success) return parsed.data;
  } catch {
    // A handler's own message that merely starts with a brace.
  }
  return { message: reason };
}
