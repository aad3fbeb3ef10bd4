import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Listens on a free port of 127.0.0.1 (the OS picks it) and says where. `close` also cuts every
 * open connection: Chromium may hold a socket open to a page it has left (a preconnect that
 * never sends a request), and `server.close()` alone would wait for it forever.
 */
export function serveOn(app: RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  return new Promise((resolve) => {
    const server = createServer(app).listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      const close = () =>
        new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        });
      resolve({ url: `http://127.0.0.1:${port}`, close });
    });
  });
}
