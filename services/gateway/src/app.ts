import type { IncomingMessage, RequestListener } from "node:http";
import express, { type Response, type Router } from "express";
import type { Logger } from "@app/platform";
import { directRoutesFirst, httpObserver, metricsHandler } from "@app/platform";
import { errorHandler, notFound } from "./errors.ts";
import { serviceProxy } from "./proxy.ts";
import { readiness } from "./readiness.ts";
import type { GatewayService } from "./service-mount.ts";
import { webPageRouter } from "./web-page.ts";

export interface GatewayDeps {
  services: GatewayService[];
  logger: Logger;
  /** Extra routes served by the gateway itself (e.g. the OpenAPI document). */
  extraRoutes?: Router;
  /** The built web page (services/web/dist), served at `/` and `/ui/...`; none when absent. */
  webRoot?: string;
}

/**
 * The gateway: request ids, health, metrics, then each service mounted in process or proxied.
 * The routes a mounted service answers directly (search's list routes) come before Express.
 */
export function createGatewayApp(deps: GatewayDeps): RequestListener {
  const app = createExpressApp(deps);
  const direct = deps.services.flatMap((s) => (s.mount.kind === "embedded" ? (s.mount.direct ?? []) : []));
  const listener = directRoutesFirst(app, direct, { service: "gateway", logger: deps.logger });
  // A header flood is refused by the Express app's first layer, whatever the route.
  return (req, res) => {
    if (tooManyHeaders(req)) app(req, res);
    else listener(req, res);
  };
}

function createExpressApp(deps: GatewayDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // One layer before the routes: each Express layer is a measurable share of a cached search.
  const observe = httpObserver({ service: "gateway", logger: deps.logger });
  app.use((req, res, next) => (tooManyHeaders(req) ? refuseHeaderFlood(res) : observe(req, res, next)));

  // The services first: their routes are the traffic; health, metrics and the document are probes.
  for (const service of deps.services) {
    const { mount } = service;
    if (mount.kind === "embedded") {
      app.use(mount.router);
    } else {
      const proxy = serviceProxy({ ...service, mount }, deps.logger);
      app.use((req, res, next) => {
        if (!matchesPrefix(req.path, service.paths)) return next();
        if (service.cors?.(req, res)) return;
        // http-proxy-middleware answers its own failures (the `error` handler in proxy.ts).
        void proxy(req, res, next);
      });
    }
  }

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const { ready, services } = await readiness(deps.services);
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "starting", ready, services, ...embeddedDetails(deps.services) });
  });
  app.get("/metrics", metricsHandler);
  if (deps.extraRoutes) app.use(deps.extraRoutes);
  if (deps.webRoot) app.use(webPageRouter(deps.webRoot));

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}

/** What the services mounted in this process add to /readyz (the catalog's state, when search is one). */
function embeddedDetails(services: GatewayService[]): Record<string, unknown> {
  return Object.assign({}, ...services.map((s) => (s.mount.kind === "embedded" ? s.mount.readyDetails?.() : undefined))) as Record<
    string,
    unknown
  >;
}

function matchesPrefix(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path === p || path.startsWith(`${p}/`));
}

/**
 * Node keeps the first 2,000 request headers and drops the rest; a request near that cannot be
 * forwarded whole (a service behind the proxy would lose headers, Host among them, and answer a
 * bare 400), so it is refused here, in a shape both faces' clients read.
 */
const MAX_REQUEST_HEADERS = 500;
const tooManyHeaders = (req: IncomingMessage): boolean => req.rawHeaders.length / 2 > MAX_REQUEST_HEADERS;
function refuseHeaderFlood(res: Response): void {
  const message = `the request has more than ${MAX_REQUEST_HEADERS} headers`;
  res.status(431).set("Connection", "close").json({ code: "header_too_large", error: "header_too_large", message });
}
