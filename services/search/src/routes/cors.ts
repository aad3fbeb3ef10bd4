import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * CORS as the public registry sends it (registry-backend `server/server.go` at 8b82dfe: echo v4.11.4's
 * CORS middleware with any origin, `AllowMethods`/`AllowHeaders` `*` and credentials), so that
 * the ComfyUI frontend can call this service from ComfyUI's page as it calls api.comfy.org:
 *
 * - every answer: `Vary: Origin`;
 * - with an `Origin`: `Access-Control-Allow-Origin` = that origin and
 *   `Access-Control-Allow-Credentials: true`;
 * - every `OPTIONS` (a preflight) answers 204 at once, never reaching a route; with an `Origin` it
 *   also carries `Access-Control-Allow-Methods: *`, `Access-Control-Allow-Headers: *` and
 *   `Vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers`. No max-age,
 *   as the registry sends none.
 *
 * Returns true when the request has been answered (a preflight).
 */
export function applyRegistryCors(req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  const preflight = req.method === "OPTIONS";
  if (origin) {
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-allow-credentials", "true");
  }
  if (!preflight) {
    res.setHeader("vary", "Origin");
    return false;
  }
  if (origin) {
    res.setHeader("vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
    res.setHeader("access-control-allow-methods", "*");
    res.setHeader("access-control-allow-headers", "*");
  } else {
    res.setHeader("vary", "Origin");
  }
  res.statusCode = 204;
  res.end();
  return true;
}

/** The same as Express middleware, for a router's registry prefixes. */
export function registryCors(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (!applyRegistryCors(req, res)) next();
}
