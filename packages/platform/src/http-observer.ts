import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { metrics } from "./metrics.ts";
import { requestId } from "./request-id.ts";

const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

export interface HttpObserverOptions {
  /** The `service` label of the HTTP metrics. */
  service: string;
  logger: Logger;
  /** The level of successful requests' log lines (debug by default: the gateway's hot path). */
  successLevel?: "debug" | "info";
}

/**
 * Request id, access log and HTTP metrics in one middleware with one `finish` listener: each
 * Express layer and listener is a measurable share of a cached search's cost.
 *
 * The id is kept from the gateway when present, so one request can be followed across
 * services. Only method, path, status and time are logged: never headers, which may carry
 * keys, and never the query string, where a misplaced key could sit; the line is only built
 * when its level is enabled. Handlers may add fields through `res.locals.logContext` (e.g. the
 * API key's label). Metrics are labelled by route pattern, not raw URL, which would explode
 * label cardinality.
 */
export function httpObserver({ service, logger, successLevel = "debug" }: HttpObserverOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = requestId(req, res);
    const started = performance.now();
    res.on("finish", () => {
      const seconds = (performance.now() - started) / 1000;
      const status = res.statusCode;
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : "unmatched";
      const labels = { service, route, method: req.method, status: String(status) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);

      const level = status >= 500 ? "error" : status >= 400 ? "info" : successLevel;
      if (!logger.isLevelEnabled(level)) return;
      const path = req.originalUrl.split("?")[0]!;
      if (status < 400 && QUIET_PATHS.has(path)) return;
      const ms = Math.round(seconds * 10_000) / 10;
      logger[level]({ reqId: id, method: req.method, path, status, ms, ...(res.locals.logContext as object | undefined) }, "request");
    });
    next();
  };
}
