import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Router } from "express";
import { metricsHandler } from "./metrics.ts";
import { httpObserver } from "./http-observer.ts";
import type { Logger } from "./logger.ts";

export interface ServiceAppOptions {
  /** The `service` label of the HTTP metrics. */
  name: string;
  /** The access log (with the request id kept from the gateway). */
  logger: Logger;
  /** The level of successful requests' log lines (default debug). */
  successLogLevel?: "debug" | "info";
  /** Runs after the request id and metrics and before every route, health included. */
  middleware?: RequestHandler[];
  /** The service's routes; none for a process that serves no API (the worker). */
  router?: Router;
  /** /readyz answers 200 `{status: "ready"}` when this is true; false or a failure answers 503. */
  isReady(): boolean | Promise<boolean>;
  /** The 503 body of /readyz, in the service's own shape. */
  notReadyBody: Record<string, unknown>;
  /** More of what /readyz says, in both answers (the search service's catalog state). */
  readyDetails?(): Record<string, unknown>;
  /** The catch-all 404 body, in the service's own error shape. */
  notFoundBody(req: Request): unknown;
  /** Last in line, for what the router throws, in the service's own error shape. */
  errorHandler?: ErrorRequestHandler;
}

/**
 * A service run on its own (and under supertest): request id, HTTP metrics, /healthz (the process
 * lives), /readyz, /metrics, the service's router, then a 404 and the error handler in the
 * service's own shapes. A gateway mounts the routers instead and brings its own of all this.
 */
export function createServiceApp(opts: ServiceAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(httpObserver({ service: opts.name, logger: opts.logger, successLevel: opts.successLogLevel }));
  for (const handler of opts.middleware ?? []) app.use(handler);
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const details = opts.readyDetails?.() ?? {};
    if (await probe(opts.isReady)) res.json({ status: "ready", ...details });
    else res.status(503).json({ ...opts.notReadyBody, ...details });
  });
  app.get("/metrics", metricsHandler);
  if (opts.router) app.use(opts.router);
  app.use((req, res) => {
    res.status(404).json(opts.notFoundBody(req));
  });
  if (opts.errorHandler) app.use(opts.errorHandler);
  return app;
}

/** A readiness check that fails is a dependency that is not ready, not a 500. */
async function probe(isReady: () => boolean | Promise<boolean>): Promise<boolean> {
  try {
    return await isReady();
  } catch {
    return false;
  }
}
