import type { ErrorRequestHandler, Response } from "express";
import type { Logger } from "@app/platform";

/** Stable `error` values of the search service's `{error, message}` bodies. */
export const SearchErrorCode = {
  invalidParameter: "invalid_parameter",
  notFound: "not_found",
  internal: "internal_error",
} as const;

export function sendError(res: Response, status: number, error: string, message: string): void {
  res.status(status).json({ error, message });
}

/** Anything thrown in a search route: client errors keep their 4xx, the rest is a logged 500. */
export function searchErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const status = typeof err?.status === "number" && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) {
      logger.error({ err, requestId: req.headers["x-request-id"], url: req.originalUrl }, "search request failed");
      if (!res.headersSent) sendError(res, 500, SearchErrorCode.internal, "the search failed unexpectedly; it has been logged");
      return;
    }
    if (!res.headersSent) sendError(res, status, SearchErrorCode.invalidParameter, err instanceof Error ? err.message : "bad request");
  };
}
