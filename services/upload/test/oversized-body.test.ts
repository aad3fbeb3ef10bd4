import { once } from "node:events";
import type { Server } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, makeTestApp, type TestApp } from "./helpers.ts";

/**
 * A body declared (Content-Length) over the route's limit is refused with a 413 before any of it
 * is read, and the client can read that answer: the connection is not reset while it is still
 * sending. The client here is the bluntest kind (as many HTTP libraries are): it writes its whole
 * body first, whatever the server says, and reads the answer afterwards.
 */
const LIMIT = 1024 * 1024;
let t: TestApp;
let server: Server;
let port: number;

beforeAll(async () => {
  t = await makeTestApp({ settings: { maxBytes: LIMIT, assetMaxBytes: LIMIT, bodyTimeoutMs: 10_000 } });
  server = t.app.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await t.close();
});

/**
 * Sends the head and all `declared` bytes (backpressure respected, the answer ignored until
 * then), `block` bytes at a time, every `everyMs` when paced; resolves with what came back and
 * any socket error.
 */
function sendAllThenRead(
  path: string,
  opts: { declared: number; block: number; everyMs?: number },
): Promise<{ received: string; error: string | null; wrote: number }> {
  const DECLARED = opts.declared;
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let error: string | null = null;
    let wrote = 0;
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on("close", () => resolve({ received: Buffer.concat(chunks).toString("latin1"), error, wrote }));
    socket.on("connect", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\n` +
          `Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${DECLARED}\r\n\r\n`,
      );
      const block = Buffer.alloc(opts.block, 0x61);
      const pump = () => {
        while (wrote < DECLARED && !socket.destroyed) {
          wrote += block.length;
          const more = socket.write(block);
          if (opts.everyMs) return void setTimeout(pump, opts.everyMs);
          if (!more) return void socket.once("drain", pump);
        }
        // The whole body is sent; now read the answer and let the server close.
        socket.end();
      };
      pump();
    });
  });
}

describe("a body declared over the limit", () => {
  for (const [route, path, code] of [
    ["the spec's upload route", "/api/upload/image", '"code":"payload_too_large"'],
    ["ComfyUI's asset upload", "/api/assets", '"code":"PAYLOAD_TOO_LARGE"'],
  ] as const) {
    it(`${route}: 413 with its error body, readable by a client that sends everything first`, async () => {
      const declared = 48 * 1024 * 1024;
      const { received, error, wrote } = await sendAllThenRead(path, { declared, block: 256 * 1024 });
      expect(error).toBeNull();
      expect(wrote).toBe(declared);
      expect(received.startsWith("HTTP/1.1 413 ")).toBe(true);
      expect(received).toContain(code);
    });

    it(`${route}: the same for a client sending slowly and steadily for longer than a few seconds`, async () => {
      // 12 MiB, 128 KiB every 80 ms: at least 7.7 s of sending after the answer.
      const declared = 12 * 1024 * 1024;
      const { received, error, wrote } = await sendAllThenRead(path, { declared, block: 128 * 1024, everyMs: 80 });
      expect(error).toBeNull();
      expect(wrote).toBe(declared);
      expect(received.startsWith("HTTP/1.1 413 ")).toBe(true);
      expect(received).toContain(code);
    });
  }
});
