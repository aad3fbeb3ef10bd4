import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpServer } from "@app/platform";
import { blake3Hex, KEY, makeTestApp, servedApps, type TestApp } from "./helpers.ts";

/**
 * No whole-request limit on upload bodies: every service listens with `createHttpServer`, which
 * used to leave Node's `requestTimeout` in place (300 s; the standalone upload service set it to
 * twice BODY_TIMEOUT_MS). Here the body timeout is 300 ms, the head timeout 250 ms, and Node
 * checks its request timers every 50 ms, so a whole-request limit would cut the slow body below; only
 * a stall (no byte for BODY_TIMEOUT_MS) may. The 320 MiB at 1 MB/s proof runs in the
 * reliability suite (test-reliability/long-upload.test.ts).
 */
const BODY_TIMEOUT_MS = 300;
const apps = servedApps();
let t: TestApp | undefined;
afterEach(() => apps.closeAll());

const head =
  '--bnd\r\nContent-Disposition: form-data; name="tags"\r\n\r\ninput\r\n--bnd\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n';
const tail = "\r\n--bnd--\r\n";
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(write: (chunk: (b: Buffer | string) => void, end: () => void) => Promise<void>) {
  t = await makeTestApp({ settings: { bodyTimeoutMs: BODY_TIMEOUT_MS } });
  const port = new URL(await apps.serve(t, createHttpServer(t.app, { headersTimeoutMs: 250, connectionsCheckingIntervalMs: 50 }))).port;
  return new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/api/assets",
      headers: { "x-api-key": KEY, "content-type": "multipart/form-data; boundary=bnd" },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    void write(
      (b) => void req.write(b),
      () => req.end(),
    );
  });
}

describe("a long upload body", () => {
  it("that keeps arriving lands whole, however long it takes (here 8x the body timeout)", async () => {
    const chunks: Buffer[] = [];
    const res = await post(async (write, end) => {
      write(head);
      for (let i = 0; i < 24; i++) {
        const chunk = Buffer.alloc(4096, i);
        chunks.push(chunk);
        write(chunk);
        await pause(100);
      }
      write(tail);
      end();
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.asset_hash).toBe(`blake3:${blake3Hex(Buffer.concat(chunks))}`);
    expect(await t!.blobs.temporaries()).toEqual([]);
  });

  it("that stalls is refused by the idle body timeout (408) and leaves nothing half-written", async () => {
    const res = await post(async (write) => {
      write(head);
      write(Buffer.alloc(4096, 1));
    });
    expect([res.status, res.body.error?.code]).toEqual([408, "REQUEST_TIMEOUT"]);
    expect(await t!.blobs.temporaries()).toEqual([]);
    expect(await t!.blobs.list()).toEqual([]);
  });
});
