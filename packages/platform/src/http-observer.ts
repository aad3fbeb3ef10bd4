import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { metrics } from "./metrics.ts";
import { requestId } from "./request-id.ts";

const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/** The request's path, without its query string (never logged: a misplaced key could sit there). */
const pathOf = (req: IncomingMessage): string => ((req as { originalUrl?: string }).originalUrl ?? req.url ?? "").split("?")[0]!;

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
export function httpObserver(opts: HttpObserverOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    observeRequest(req, res, opts, () => {
      const pattern = (req.route as { path?: string | RegExp } | undefined)?.path;
      return pattern ? `${req.baseUrl}${String(pattern)}` : "unmatched";
    });
    next();
  };
}

/**
 * The same observation for a request that never enters Express (a direct route, see
 * `direct-routes.ts`): `routeOf` gives the metrics' route label once the response is finished.
 */
export function observeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  { service, logger, successLevel = "debug" }: HttpObserverOptions,
  routeOf: () => string,
): void {
  const id = requestId(req, res);
  const started = performance.now();
  res.on("finish", () => {
    const seconds = (performance.now() - started) / 1000;
    const status = res.statusCode;
    const labels = { service, route: routeOf(), method: req.method ?? "", status: String(status) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, seconds);

    // /readyz answering 503 while the service starts (the catalog indexing) is a state, not an error.
    const level = status >= 500 && !(status === 503 && pathOf(req) === "/readyz") ? "error" : status >= 400 ? "info" : successLevel;
    if (!logger.isLevelEnabled(level)) return;
    const path = pathOf(req);
    if (status < 400 && QUIET_PATHS.has(path)) return;
    const ms = Math.round(seconds * 10_000) / 10;
    const logContext = (res as { locals?: { logContext?: object } }).locals?.logContext;
    logger[level]({ reqId: id, method: req.method, path, status, ms, ...logContext }, "request");
  });
}
