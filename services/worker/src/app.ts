import express, { type Express } from "express";
import type { JobQueue } from "@app/jobs";
import { httpMetrics, metricsHandler, requestId } from "@app/platform";

export interface WorkerAppDeps {
  queue: Pick<JobQueue, "isReady">;
}

/**
 * The worker serves no API, only what Kubernetes and Prometheus ask: /healthz (the process
 * lives), /readyz (Redis answers), /metrics (job counts and durations among the rest).
 */
export function createApp(deps: WorkerAppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use((req, res, next) => {
    requestId(req, res);
    next();
  });
  app.use(httpMetrics("worker"));
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    if (await deps.queue.isReady()) res.json({ status: "ready" });
    else res.status(503).json({ error: "not_ready", message: "the job queue's Redis does not answer" });
  });
  app.get("/metrics", metricsHandler);
  app.use((req, res) => {
    res.status(404).json({ error: "not_found", message: `no route ${req.method} ${req.path.slice(0, 200)}` });
  });
  return app;
}
