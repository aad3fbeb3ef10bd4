import type { Express } from "express";
import type { JobQueue } from "@app/jobs";
import { createServiceApp, type Logger } from "@app/platform";

export interface WorkerAppDeps {
  queue: Pick<JobQueue, "isReady">;
  logger: Logger;
}

/**
 * The worker serves no API, only what Kubernetes and Prometheus ask: /healthz (the process
 * lives), /readyz (Redis answers), /metrics (job counts and durations among the rest).
 */
export function createApp(deps: WorkerAppDeps): Express {
  return createServiceApp({
    name: "worker",
    logger: deps.logger,
    isReady: () => deps.queue.isReady(),
    notReadyBody: { error: "not_ready", message: "the job queue's Redis does not answer" },
    notFoundBody: (req) => ({ error: "not_found", message: `no route ${req.method} ${req.path.slice(0, 200)}` }),
  });
}
