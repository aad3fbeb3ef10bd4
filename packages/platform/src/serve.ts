import { createServer, type Server } from "node:http";
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
  opts: { port: number; host: string; logger: Logger; closables?: Closable[]; drainMs?: number; requestTimeoutMs?: number },
): Promise<Server> {
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  if (opts.requestTimeoutMs) server.requestTimeout = opts.requestTimeoutMs;
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
