import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { ApiKey } from "../adapters/keys/api-keys.ts";
import type { RateLimiter } from "../adapters/limits/rate-limiter.ts";
import { rateLimited, ApiFailure } from "../domain/errors.ts";
import { effectiveLimits, type RateLimits } from "../domain/key-limits.ts";
import { byteBudget, UNLIMITED_BYTES, type ByteBudget } from "./byte-budget.ts";

/** Upload routes take bodies (requests and bytes are limited); every other keyed route counts requests. */
export type RouteClass = "upload" | "assets";

export interface RateLimitSetup {
  limiter: RateLimiter;
  /** RATE_LIMIT_*: the limits of a key that does not name its own. */
  defaults: RateLimits;
}

/** The key `requireApiKey` accepted for this request. */
export function apiKeyOf(res: Response): ApiKey | undefined {
  return res.locals.apiKey as ApiKey | undefined;
}

/** This upload request's share of its key's bytes per minute (unlimited when no limiter ran). */
export function byteBudgetOf(res: Response): ByteBudget {
  return (res.locals.byteBudget as ByteBudget | undefined) ?? UNLIMITED_BYTES;
}

/**
 * Runs after `requireApiKey`: counts the request against its key's requests per minute for the
 * route's class (`upload_rpm` or `assets_rpm`, 0 = no limit) and, on upload routes, gives the
 * handler the key's byte budget. Over the limit: 429 `rate_limited` with Retry-After.
 */
export function limitPerKey(setup: RateLimitSetup, routeClass: RouteClass): RequestHandler {
  const bucket = routeClass === "upload" ? "upload_rpm" : "assets_rpm";
  return (_req: Request, res: Response, next: NextFunction) => {
    const key = apiKeyOf(res);
    if (!key) return next(new ApiFailure("unauthorized", "missing API key"));
    const limits = effectiveLimits(setup.defaults, key.limits);
    if (routeClass === "upload") res.locals.byteBudget = byteBudget(setup.limiter, key.id, limits.upload_mbpm);
    const perMinute = limits[bucket];
    if (perMinute === 0) return next();
    setup.limiter
      .consume(bucket, key.id, perMinute, 1)
      .then(
        (decision) =>
          next(
            decision.allowed
              ? undefined
              : rateLimited(decision.retryAfterMs, `this key's limit of ${perMinute} requests per minute (${bucket}) is reached`),
          ),
        next,
      );
  };
}
