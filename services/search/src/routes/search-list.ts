import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQueryString } from "node:querystring";
import type { Logger } from "@app/platform";
import type { SearchEngine } from "../ports/search-engine.ts";
import { BoundedMemo } from "../fast/bounded-memo.ts";
import { resultPage } from "../fast/node-output.ts";
import { parseSearchQuery, toEngineQuery, type QueryParseResult } from "../domain/query.ts";
import { SearchErrorCode, sendError, sendJsonText } from "./errors.ts";

/**
 * GET /nodes/search and GET /nodes (the registry's list route): one handler, so one query
 * string gives one body on either. It needs nothing of Express, so the same handler is mounted
 * in the router and answers directly from node:http (`DirectRoute`), and it answers its own
 * errors, since no Express error handler stands behind it there.
 */
export function searchListHandler(engine: SearchEngine, logger: Logger): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // Parsing is a pure function of the query string, and clients repeat theirs.
  const parsedByQueryString = new BoundedMemo("parse", (_v: QueryParseResult, key: string) => key.length + 64, 16_384, 8_000_000);
  return async (req, res) => {
    try {
      const qs = queryString(req.url ?? "");
      // Express's default ("simple") query parser is this one: both ways in read the same values.
      const parsed = parsedByQueryString.getOrCompute(qs, () => parseSearchQuery(parseQueryString(qs)));
      if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
      const q = parsed.query;
      const result = await engine.search(toEngineQuery(q));
      sendJsonText(res, resultPage(result, q.page, q.limit));
    } catch (err) {
      logger.error({ err, requestId: req.headers["x-request-id"], url: req.url }, "search request failed");
      if (!res.headersSent) sendError(res, 500, SearchErrorCode.internal, "the search failed unexpectedly; it has been logged");
      else res.destroy();
    }
  };
}

function queryString(url: string): string {
  const i = url.indexOf("?");
  return i < 0 ? "" : url.slice(i + 1);
}
