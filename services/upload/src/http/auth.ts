import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { ApiKey, ApiKeys } from "../adapters/keys/api-keys.ts";
import { ApiFailure } from "../domain/errors.ts";
import { limitPerKey, type RateLimitSetup, type RouteClass } from "./rate-limit.ts";

/** Query parameters that look like a credential: a key there ends up in proxy and access logs. */
const QUERY_KEY_RE = /^((x[-_])?api[-_]?key|key|token|access[-_]?token|auth|authorization|bearer)$/i;

/** The presented key: `X-API-Key: <key>` or `Authorization: Bearer <key>`. */
export function presentedKey(req: Request): string | null {
  const header = req.headers["x-api-key"];
  if (typeof header === "string" && header.trim() !== "") return header.trim();
  const auth = req.headers.authorization;
  if (typeof auth === "string") {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1]!;
  }
  return null;
}

/**
 * The owner of what this request reads and writes in the asset records: the key's principal,
 * its key-file label (API_KEYS entries: `API_KEYS[<position>]`). A rotated key keeps it: the
 * new key's line carries the same label (`pnpm apikey rotate --label NAME`).
 */
export function ownerOf(res: Response): string {
  const key = res.locals.apiKey as ApiKey | undefined;
  if (!key) throw new Error("ownerOf: the route has no keyedAccess in front of it");
  return key.label;
}

export function requireApiKey(keys: ApiKeys): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const url = new URL(req.originalUrl, "http://x");
    for (const name of url.searchParams.keys()) {
      if (QUERY_KEY_RE.test(name)) {
        return next(
          new ApiFailure(
            "unauthorized",
            `API keys are not accepted in the query string ('${name}'); send the X-API-Key header or Authorization: Bearer`,
          ),
        );
      }
    }
    const key = presentedKey(req);
    if (key === null) {
      return next(new ApiFailure("unauthorized", "missing API key: send the X-API-Key header or Authorization: Bearer <key>"));
    }
    const found = keys.verify(key);
    if (found === null) return next(new ApiFailure("unauthorized", "unknown API key"));
    res.locals.apiKey = found;
    res.locals.logContext = { keyLabel: found.label };
    next();
  };
}

/**
 * The front door of every keyed route: the key is checked, then counted against its limits
 * (one middleware, so a route cannot have the first without the second).
 */
export function keyedAccess(keys: ApiKeys, limits: RateLimitSetup, routeClass: RouteClass): RequestHandler {
  const auth = requireApiKey(keys);
  const limit = limitPerKey(limits, routeClass);
  return (req, res, next) => auth(req, res, (err?: unknown) => (err ? next(err) : limit(req, res, next)));
}

/** The two doors: `upload` for routes that take an upload body, `read` for every other keyed route (view, assets, tags). */
export interface KeyedAccess {
  upload: RequestHandler;
  read: RequestHandler;
}

/** Both doors over one key set and one limiter. */
export function keyedAccessOf(keys: ApiKeys, limits: RateLimitSetup): KeyedAccess {
  return { upload: keyedAccess(keys, limits, "upload"), read: keyedAccess(keys, limits, "assets") };
}
