import { Agent } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { createProxyMiddleware, type RequestHandler } from "http-proxy-middleware";
import type { Logger } from "@app/platform";
import type { GatewayService } from "./service-mount.ts";

/** Without a keep-alive agent every proxied request pays a TCP handshake: half the throughput (ENVIRONMENT.md). */
const keepAliveAgent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 60_000 });

export function serviceProxy(service: GatewayService & { mount: { kind: "proxy" } }, logger: Logger): RequestHandler {
  return createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: service.mount.url,
    agent: keepAliveAgent,
    xfwd: true,
    proxyTimeout: 120_000,
    on: {
      error: (err, req, res) => {
        logger.warn({ err: err.message, service: service.name, reqId: req.headers["x-request-id"] }, "upstream unreachable");
        if (!isResponse(res)) {
          res.destroy();
          return;
        }
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify(service.unavailableBody(`the ${service.name} service is unreachable`)));
      },
    },
  });
}

function isResponse(res: ServerResponse | Socket): res is ServerResponse {
  return "writeHead" in res;
}
