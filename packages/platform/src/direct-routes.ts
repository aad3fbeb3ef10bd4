import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { observeRequest, type HttpObserverOptions } from "./http-observer.ts";

/**
 * A GET/HEAD route answered straight from node:http, ahead of Express. Express costs a large
 * share of a request's CPU before the first middleware runs (its request and response
 * prototypes, the router's matching and closures): as much as a search the service has never
 * seen before (docs/decisions/0002). The search routes, a registry's whole traffic, skip it; everything else, and any
 * spelling of these paths other than the exact one (trailing slash, capitals), goes through
 * Express, where the same handler is mounted, so the answers are the same either way.
 */
export interface DirectRoute {
  /** Exact request paths (the part before `?`). */
  paths: readonly string[];
  /** Answers the request, errors included, in the service's own shape: it never rejects. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void;
}

/** `app` with `routes` answered before it, observed (request id, access log, metrics) as Express routes are. */
export function directRoutesFirst(app: RequestListener, routes: readonly DirectRoute[], observer: HttpObserverOptions): RequestListener {
  const byPath = new Map<string, DirectRoute>();
  for (const route of routes) for (const path of route.paths) byPath.set(path, route);
  if (byPath.size === 0) return app;
  return (req, res) => {
    const path = pathOf(req.url ?? "");
    const route = req.method === "GET" || req.method === "HEAD" ? byPath.get(path) : undefined;
    if (!route) return app(req, res);
    observeRequest(req, res, observer, () => path);
    void route.handle(req, res);
  };
}

function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}
