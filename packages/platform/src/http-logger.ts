import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { requestId } from "./request-id.ts";

const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Access log with the request id (kept from the gateway when present, so one request can be
 * followed across services). Only method, path, status and time are logged: never headers,
 * which may carry keys, and never the query string, where a misplaced key could sit.
 * Successes log at `successLevel` (debug by default: the gateway's hot path; pino-http's
 * per-request child logger cost 6% of a search's CPU); the line is only built when its level is
 * enabled. Handlers may add fields through `res.locals.logContext` (e.g. the API key's label).
 */
export function httpLogger(logger: Logger, successLevel: "debug" | "info" = "debug") {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = requestId(req, res);
    const started = performance.now();
    res.once("finish", () => {
      const status = res.statusCode;
      const level = status >= 500 ? "error" : status >= 400 ? "info" : successLevel;
      if (!logger.isLevelEnabled(level)) return;
      const path = req.originalUrl.split("?")[0]!;
      if (status < 400 && QUIET_PATHS.has(path)) return;
      const ms = Math.round((performance.now() - started) * 10) / 10;
      logger[level]({ reqId: id, method: req.method, path, status, ms, ...(res.locals.logContext as object | undefined) }, "request");
    });
    next();
  };
}
