import type { IncomingMessage } from "node:http";
import type { ErrorRequestHandler } from "express";
import { JobFailedError, JobTimeoutError, QueueUnavailableError } from "@app/jobs";
import type { Logger } from "@app/platform";
import { BlobStoreUnavailableError } from "@app/blobs";
import { ReferenceStoreUnavailableError } from "../adapters/references/reference-store.ts";
import { assetErrorBody, errorBody, ApiFailure } from "../domain/errors.ts";

/**
 * The rest of a refused request body is read and dropped while it keeps coming (a client that
 * sends its whole body before reading the answer, as many HTTP libraries do, then reads it
 * instead of a reset), until it pauses for LINGER_IDLE_MS or passes DRAIN_MAX_BYTES; then the
 * connection is cut.
 */
const LINGER_IDLE_MS = 5_000;
const DRAIN_MAX_BYTES = 1024 ** 3;

/** Every failure becomes `{code, message, error}`; only our own faults are 5xx. */
export function toApiFailure(err: unknown): ApiFailure {
  if (err instanceof ApiFailure) return err;
  if (err instanceof JobTimeoutError) {
    return new ApiFailure("unavailable", "the mask derivatives are still being made; retry the same request shortly");
  }
  if (err instanceof QueueUnavailableError) return new ApiFailure("unavailable", "the job queue is unavailable; retry shortly");
  if (err instanceof BlobStoreUnavailableError) return new ApiFailure("unavailable", "the blob store is unavailable; retry shortly");
  if (err instanceof ReferenceStoreUnavailableError)
    return new ApiFailure("unavailable", "the asset database is unavailable; retry shortly");
  if (err instanceof JobFailedError && err.code === "invalid_image") {
    return new ApiFailure("invalid_image", "the original or the mask could not be decoded");
  }
  if (err instanceof JobFailedError && err.code === "original_not_found") {
    return new ApiFailure("original_not_found", "original_ref names no stored image");
  }
  return new ApiFailure("internal", "internal error");
}

/** The body a refused request is answered with: `{code, message, error}` (upload, view) or ComfyUI's envelope (asset API). */
export type ErrorShape = (failure: ApiFailure) => object;
const uploadShape: ErrorShape = (failure) => errorBody(failure.code, failure.message);
export const assetShape: ErrorShape = assetErrorBody;

export function apiErrorHandler(logger: Logger, shape: ErrorShape = uploadShape): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const failure = toApiFailure(err);
    if (failure.code === "internal") logger.error({ err, path: req.path }, "upload request failed");
    else logger.debug({ code: failure.code, path: req.path }, "upload request refused");
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const h of ["ETag", "Cache-Control", "Content-Disposition", "Accept-Ranges", "Content-Length"]) res.removeHeader(h);
    // A refused body may still be arriving. It is read and dropped (a lingering close), so a
    // client still sending reads the answer instead of a reset; a client too slow to send its
    // body in time is cut off at once.
    if (!req.complete) {
      if (failure.code === "request_timeout") {
        res.setHeader("Connection", "close");
      } else {
        drainRefusedBody(req);
      }
    }
    if (failure.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(failure.retryAfterSeconds));
    res.status(failure.status).json(shape(failure));
  };
}

function drainRefusedBody(req: IncomingMessage): void {
  let drained = 0;
  const cut = () => {
    clearTimeout(idle);
    req.socket.destroy();
  };
  const idle = setTimeout(cut, LINGER_IDLE_MS);
  idle.unref();
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) cut();
    else idle.refresh();
  });
  req.once("end", () => clearTimeout(idle));
  req.resume();
}
