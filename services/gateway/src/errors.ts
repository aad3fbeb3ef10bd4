import type { NextFunction, Request, Response } from "express";
import type { Logger } from "@app/platform";

/** Gateway-level errors use the registry's `{error, message}` shape. */
export function notFound(req: Request, res: Response): void {
  res.status(404).json({ error: "not_found", message: `no route for ${req.method} ${req.path}` });
}

export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const status = httpStatusOf(err);
    if (status && status < 500) {
      res.status(status).json({ error: "bad_request", message: err instanceof Error ? err.message : "bad request" });
      return;
    }
    logger.error({ err, reqId: req.headers["x-request-id"] }, "unhandled error");
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(500).json({ error: "internal_error", message: `internal error (request id ${String(req.headers["x-request-id"] ?? "")})` });
  };
}

/** Errors raised by body parsers and the like carry a 4xx `status`. */
function httpStatusOf(err: unknown): number | undefined {
  if (typeof err === "object" && err !== null && "status" in err && typeof err.status === "number") return err.status;
  return undefined;
}
