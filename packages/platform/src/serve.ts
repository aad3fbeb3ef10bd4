import { createServer, STATUS_CODES, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { RequestListener } from "node:http";
import type { Logger } from "pino";

export interface Closable {
  close(): Promise<void>;
}

/**
 * Listen, and on SIGTERM/SIGINT drain: stop accepting, let in-flight requests finish (up to
 * `drainMs`), then close the given clients (queues, engines, stores) in order.
 */
export function serve(
  handler: RequestListener,
  opts: { port: number; host: string; logger: Logger; closables?: Closable[]; drainMs?: number },
): Promise<Server> {
  const server = createHttpServer(handler);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    opts.logger.info({ signal }, "draining");
    const force = setTimeout(() => server.closeAllConnections(), opts.drainMs ?? 10_000);
    force.unref();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const c of opts.closables ?? []) {
      await c.close().catch((err: unknown) => opts.logger.error({ err }, "close failed"));
    }
    opts.logger.info("stopped");
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      const addr = server.address();
      opts.logger.info({ address: addr }, "listening");
      resolve(server);
    });
  });
}

export interface HttpServerOptions {
  /** How long a request head may take (default 66 s, past the load balancer's keep-alive). */
  headersTimeoutMs?: number;
  /** How often Node looks for late requests (default 30 s; tests lower it to see the check run). */
  connectionsCheckingIntervalMs?: number;
}

/**
 * The HTTP server every service listens with (tests pass it to supertest to meet the same parser).
 *
 * No whole-request limit: Node's `requestTimeout` (300 s by default) ends any request however
 * steadily its body arrives, and a model-sized upload on an ordinary link takes longer. A body is
 * timed by the route that reads it, from the last byte received (BODY_TIMEOUT_MS), so a stalled
 * one is still cut; headers by `headersTimeout`; a body no route reads, by the idle socket timeout.
 */
export function createHttpServer(handler: RequestListener, opts: HttpServerOptions = {}): Server {
  const server = createServer(
    { requestTimeout: 0, ...(opts.connectionsCheckingIntervalMs && { connectionsCheckingInterval: opts.connectionsCheckingIntervalMs }) },
    handler,
  );
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = opts.headersTimeoutMs ?? 66_000;
  // Longer than any wait a route makes without a byte in either direction (a mask job, a commit).
  server.timeout = IDLE_SOCKET_MS;
  server.on("clientError", answerClientError);
  return server;
}

const IDLE_SOCKET_MS = 120_000;

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, "header_too_large", "the request headers are larger than the server accepts (16 KiB)"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "request_timeout", "the request did not arrive in time"],
  ERR_HTTP_HEADERS_TIMEOUT: [408, "request_timeout", "the request headers did not arrive in time"],
};

/**
 * Requests Node's parser refuses before any route sees them (oversized headers, malformed
 * request lines) still get a JSON error instead of a bare status line. The body carries both
 * `error` (the search face's shape) and `code` (the upload face's), since no route was chosen.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A response already under way on this socket cannot be followed by another one.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, code, message] = CLIENT_ERRORS[err.code ?? ""] ?? [400, "bad_request", "the request is not valid HTTP"];
  const body = JSON.stringify({ code, error: code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
