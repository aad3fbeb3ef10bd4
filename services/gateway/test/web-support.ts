import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on a free port of 127.0.0.1 (the OS picks it) and says where. */
export function serveOn(app: RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  return new Promise((resolve) => {
    const server = createServer(app).listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}
