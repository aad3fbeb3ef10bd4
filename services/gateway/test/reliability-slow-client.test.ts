import { readdir, mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyPng } from "@app/testkit/png";
import { sleep, startService, SCRIPTS, type Service } from "@app/testkit/processes";

/**
 * A client that sends its upload one byte a second does not hold the server forever: once
 * BODY_TIMEOUT_MS has passed the gateway answers 408 `{code: "request_timeout", ...}`, closes
 * the connection, removes the temporary, and serves everyone else meanwhile and afterwards.
 */
const KEY = "rel-slow-client-key-0123456789";
const BODY_TIMEOUT_MS = 1500;
let dir: string;
let gw: Service;
let behind: Service | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rel-slow-"));
  gw = await startService(SCRIPTS.gateway, { DATA_DIR: dir, API_KEYS: KEY, BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) });
});
afterAll(async () => {
  await gw?.stop();
  await behind?.stop();
  await rm(dir, { recursive: true, force: true });
});

interface Trickle {
  socket: Socket;
  /** Everything the server sent back. */
  received(): string;
  closed: Promise<void>;
  bytesSent(): number;
}

/** Send the request head and the first part's head at once, then the image one byte a second (at most `maxBytes`). */
function trickleUpload(port: number, maxBytes: number): Trickle {
  const boundary = "----slowclient";
  const image = tinyPng(7, 64, 64);
  const partHead = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="slow.png"\r\nContent-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = partHead.length + image.length + tail.length;
  const socket = connect(port, "127.0.0.1");
  let received = "";
  let sent = 0;
  socket.setEncoding("utf8");
  socket.on("data", (d: string) => (received += d));
  socket.on("error", () => undefined);
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  socket.write(
    `POST /api/upload/image HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`,
  );
  socket.write(partHead);
  void (async () => {
    for (let i = 0; i < Math.min(maxBytes, image.length) && !socket.destroyed && received === ""; i++) {
      socket.write(image.subarray(i, i + 1));
      sent++;
      await sleep(1000);
    }
  })();
  return { socket, received: () => received, closed, bytesSent: () => sent };
}

async function uploadOk(seed: number): Promise<void> {
  const form = new FormData();
  form.set("image", new Blob([new Uint8Array(tinyPng(seed))], { type: "image/png" }), "a.png");
  const res = await fetch(`${gw.url}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": KEY } });
  expect(res.status).toBe(200);
}

describe("slow clients", () => {
  it("one byte a second: 408 request_timeout, the connection closed and the temporary removed, others served meanwhile", async () => {
    const MAX = 30;
    const slow = trickleUpload(gw.port, MAX);
    // Served while the slow one holds its connection.
    for (let i = 0; i < 3; i++) await uploadOk(10 + i);
    // Bounded: the answer must come long before the slow client would have sent its 30 bytes.
    await Promise.race([slow.closed, sleep(MAX * 1000)]);
    expect(slow.socket.destroyed || slow.socket.readableEnded, "the server closed the connection").toBe(true);
    expect(slow.bytesSent()).toBeLessThan(MAX);
    const [head, body] = slow.received().split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 408 /);
    const json = JSON.parse(body!.trim()) as Record<string, unknown>;
    expect(json.code).toBe("request_timeout");
    expect(json.error).toBe("request_timeout");
    expect(json.message).toMatch(/BODY_TIMEOUT|within \d+ ms/);
    expect(await readdir(join(dir, "blobs", "tmp"))).toEqual([]);
    // And after it.
    await uploadOk(20);
  });

  it("several slow clients at once are all cut off, and the service answers throughout", async () => {
    const slow = Array.from({ length: 20 }, () => trickleUpload(gw.port, 30));
    for (let i = 0; i < 5; i++) await uploadOk(30 + i);
    await Promise.race([Promise.all(slow.map((s) => s.closed)), sleep(30_000)]);
    for (const s of slow) expect(s.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(await readdir(join(dir, "blobs", "tmp"))).toEqual([]);
    await uploadOk(40);
  });
});

describe("slow clients through the gateway proxying to the upload process", () => {
  let proxied: Service;
  let storeDir: string;
  beforeAll(async () => {
    storeDir = join(dir, "upload");
    behind = await startService(SCRIPTS.upload, { DATA_DIR: storeDir, API_KEYS: KEY, BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) });
    proxied = await startService(SCRIPTS.gateway, { DATA_DIR: join(dir, "gw"), API_KEYS: KEY, UPLOAD_URL: behind.url });
  });
  afterAll(async () => {
    await proxied?.stop();
  });

  it("the upload service's 408 reaches the client, its connection closes, the temporary is removed", async () => {
    const slow = Array.from({ length: 10 }, () => trickleUpload(proxied.port, 30));
    await Promise.race([Promise.all(slow.map((s) => s.closed)), sleep(30_000)]);
    for (const s of slow) {
      expect(s.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(s.socket.destroyed || s.socket.readableEnded).toBe(true);
    }
    expect(await readdir(join(storeDir, "blobs", "tmp"))).toEqual([]);
    const form = new FormData();
    form.set("image", new Blob([new Uint8Array(tinyPng(50))], { type: "image/png" }), "a.png");
    const res = await fetch(`${proxied.url}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": KEY } });
    expect(res.status).toBe(200);
  });
});
