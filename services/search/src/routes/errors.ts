import type { ServerResponse } from "node:http";
import type { ErrorRequestHandler } from "express";
import type { JsonText } from "../fast/node-output.ts";
import type { Logger } from "@app/platform";

/** Stable `error` values of the search service's `{error, message}` bodies. */
export const SearchErrorCode = {
  invalidParameter: "invalid_parameter",
  notFound: "not_found",
  forbidden: "forbidden",
  internal: "internal_error",
  /** A gateway's answer when it cannot reach this service. */
  unavailable: "service_unavailable",
} as const;

/** What a client of the search routes gets when a gateway cannot reach this service. */
export const unavailableBody = (message: string) => ({ error: SearchErrorCode.unavailable, message });

/** Plain node:http, so that the direct search route (never in Express) and Express's routes answer alike. */
export function sendError(res: ServerResponse, status: number, error: string, message: string): void {
  const json = JSON.stringify({ error, message });
  res.statusCode = status;
  sendJsonText(res, { json, bytes: Buffer.byteLength(json) });
}

/**
 * JSON text already built. Node writes headers and a string body in one write; Express's send
 * would copy the text into a Buffer and write the two apart, which costs a fifth of a cached
 * search. HEAD gets the same headers and no body. The head is written first (what `end` would
 * do itself) because `end` on a response with no head yet measures the body's UTF-8 length
 * again, a scan of the whole page, although the length is already known.
 */
export function sendJsonText(res: ServerResponse, { json, bytes }: JsonText): void {
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", bytes);
  res.writeHead(res.statusCode);
  res.end(json);
}

/** Anything thrown in a search route: client errors keep their 4xx, the rest is a logged 500. */
export function searchErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const given = (err as { status?: unknown } | null | undefined)?.status;
    const status = typeof given === "number" && given >= 400 && given < 500 ? given : 500;
    if (status === 500) {
      logger.error({ err, requestId: req.headers["x-request-id"], url: req.originalUrl }, "search request failed");
      if (!res.headersSent) sendError(res, 500, SearchErrorCode.internal, "the search failed unexpectedly; it has been logged");
      return;
    }
    if (!res.headersSent) sendError(res, status, SearchErrorCode.invalidParameter, err instanceof Error ? err.message : "bad request");
  };
}

/** A value as JSON, by the same single write as every other search answer. */
export function sendJson(res: ServerResponse, value: unknown): void {
  const json = JSON.stringify(value);
  sendJsonText(res, { json, bytes: Buffer.byteLength(json) });
}
