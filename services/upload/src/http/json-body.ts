import express, { type RequestHandler } from "express";
import type { z } from "zod";
import { ApiFailure } from "../domain/errors.ts";

/** Asset API bodies are small JSON objects; nothing larger is read. */
const JSON_LIMIT = "64kb";

// Any Content-Type: ComfyUI's routes read JSON whatever the client declared.
const parser = express.json({ type: () => true, limit: JSON_LIMIT, strict: true });

/** Reads the JSON body; anything unreadable becomes `invalid_json` (413 past the limit). */
export const jsonBody: RequestHandler = (req, res, next) => {
  const declared = req.headers["content-length"];
  if (declared === "0" || (declared === undefined && req.headers["transfer-encoding"] === undefined)) {
    return next(new ApiFailure("invalid_json", "the request body is empty; send a JSON object"));
  }
  parser(req, res, (err?: unknown) => {
    if (!err) return next();
    const { type, status } = err as { type?: string; status?: number };
    if (type === "entity.too.large") return next(new ApiFailure("payload_too_large", `the JSON body is over ${JSON_LIMIT}`));
    if (typeof status === "number" && status >= 400 && status < 500) {
      return next(new ApiFailure("invalid_json", `the request body must be a JSON object (${(err as Error).message})`));
    }
    next(err);
  });
};

/**
 * `jsonBody` under the one body timeout every upload body has (`BODY_TIMEOUT_MS`, read at each
 * request): a body still arriving then is answered 408 `request_timeout` and its connection
 * closed (the error handler), instead of holding the connection until Node's own 300 s limit.
 */
export function timedJsonBody(settings: { bodyTimeoutMs: number }): RequestHandler {
  return (req, res, next) => {
    const ms = settings.bodyTimeoutMs;
    let settled = false;
    const done = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      next(err);
    };
    const timer = setTimeout(() => done(new ApiFailure("request_timeout", `the request body did not arrive within ${ms} ms`)), ms);
    jsonBody(req, res, done);
  };
}

/**
 * The parsed body checked against its schema; the message names the first bad field (a `name`
 * or tag the database could not keep whole included: see `isStorableText` in the contracts).
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiFailure("invalid_json", "the request body must be a JSON object");
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiFailure("invalid_body", describeIssue(parsed.error));
  return parsed.data;
}

export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.length > 0 ? issue.path.join(".") : "body";
  return `${path}: ${issue.message}`;
}
