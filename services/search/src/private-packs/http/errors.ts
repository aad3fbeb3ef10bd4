import type { ErrorRequestHandler } from "express";
import type { Logger } from "@app/platform";
import { PrivatePackError } from "../domain/errors.ts";
import { sendError, sendJson } from "../../routes/errors.ts";

/** A refusal answers its status and body; a malformed JSON body is a 400; anything else is logged and passed on. */
export function privatePackErrors(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (err instanceof PrivatePackError) {
      res.status(err.status);
      return sendJson(res, err.body);
    }
    const status = (err as { status?: number; type?: string })?.status;
    if (status === 400 || status === 413)
      return sendError(res, status, "invalid_parameter", status === 413 ? "the body is too large" : "the body is not valid JSON");
    logger.error({ err, url: req.originalUrl }, "private pack request failed");
    next(err);
  };
}
