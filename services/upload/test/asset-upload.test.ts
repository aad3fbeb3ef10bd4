import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_TAGS_PER_ASSET } from "@app/contracts";
import { NO_LIMITS } from "../src/domain/key-limits.ts";
import { KEY, makeTestApp, multipart, type TestApp } from "./helpers.ts";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * POST /api/assets' own limits, as routes in process: its size limit (ASSET_UPLOAD_MAX_BYTES,
 * apart from /api/upload/image's), a timeout counted from the last byte (a long upload that
 * keeps arriving is not cut), the upload rate class, and a large body streamed, not held.
 * What ComfyUI's tests ask of the route: comfy-asset-api-cases.ts.
 */
let t: TestApp | undefined;
let server: Server | undefined;
afterEach(async () => {
  server?.close();
  await t?.close();
  server = undefined;
  t = undefined;
});

const form = (file: Buffer, tags = '["input"]') =>
  multipart([
    { name: "tags", body: tags },
    { name: "file", filename: "f.bin", contentType: "application/octet-stream", body: file },
  ]);

/** A POST /api/assets whose body is written by `write` over a real socket (chunked), answered as status and JSON. */
async function streamed(app: TestApp, write: (chunk: (b: Buffer | string) => boolean, end: () => void) => Promise<void>) {
  server = app.app.listen(0);
  const port = (server.address() as AddressInfo).port;
  return new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/api/assets",
      headers: { "x-api-key": KEY, "content-type": "multipart/form-data; boundary=bnd", "transfer-encoding": "chunked" },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    void write(
      (b) => req.write(b),
      () => req.end(),
    );
  });
}

const head =
  '--bnd\r\nContent-Disposition: form-data; name="tags"\r\n\r\n["input"]\r\n--bnd\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n';
const tail = "\r\n--bnd--\r\n";
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("POST /api/assets limits", () => {
  it("has its own size limit: a file /api/upload/image refuses is taken here, one over ASSET_UPLOAD_MAX_BYTES is refused and nothing stays", async () => {
    t = await makeTestApp({ settings: { maxBytes: 32 * 1024, assetMaxBytes: 256 * 1024 } });
    const png = await noisePng(160, 160); // ~77 KB: over the image route's limit, under the asset route's
    expect(png.length).toBeGreaterThan(32 * 1024);
    const image = await keyedClient(t.app, KEY).post("/api/upload/image").attach("image", png, "a.png");
    expect([image.status, image.body.code]).toEqual([413, "payload_too_large"]);
    const ok = form(png);
    const asset = await keyedClient(t.app, KEY).post("/api/assets").set("Content-Type", ok.contentType).send(ok.body);
    expect(asset.status, JSON.stringify(asset.body)).toBe(201);
    const before = (await t.blobs.list()).length;
    const big = form(Buffer.alloc(300 * 1024, 7));
    const refused = await keyedClient(t.app, KEY).post("/api/assets").set("Content-Type", big.contentType).send(big.body);
    expect([refused.status, refused.body.error?.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    const cut = await streamed(t, async (write, end) => {
      write(head);
      for (let i = 0; i < 10; i++) write(Buffer.alloc(64 * 1024, 9)); // 640 KiB, no Content-Length: cut as it streams
      write(tail);
      end();
    });
    expect([cut.status, cut.body.error?.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    expect((await t.blobs.list()).length).toBe(before);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("times out from the last byte: a body that keeps arriving past BODY_TIMEOUT_MS is stored, one that stalls is cut (408)", async () => {
    t = await makeTestApp({ settings: { bodyTimeoutMs: 400 } });
    const arriving = await streamed(t, async (write, end) => {
      write(head);
      for (let i = 0; i < 12; i++) {
        write(Buffer.alloc(1024, i));
        await pause(100); // 1.2 s in all, never 400 ms without a byte
      }
      write(tail);
      end();
    });
    expect(arriving.status, JSON.stringify(arriving.body)).toBe(201);
    const stalled = await streamed(t, async (write) => {
      write(head);
      write(Buffer.alloc(1024, 1));
      // and nothing more
    });
    expect([stalled.status, stalled.body.error?.code]).toEqual([408, "REQUEST_TIMEOUT"]);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("counts as an upload for the key's limits (upload_rpm): 429 RATE_LIMITED in the envelope, with Retry-After", async () => {
    t = await makeTestApp({ settings: { rateLimits: { ...NO_LIMITS, upload_rpm: 1 } } });
    const first = form(Buffer.from("first"));
    await keyedClient(t.app, KEY).post("/api/assets").set("Content-Type", first.contentType).send(first.body).expect(201);
    const second = form(Buffer.from("second"));
    const limited = await keyedClient(t.app, KEY).post("/api/assets").set("Content-Type", second.contentType).send(second.body);
    expect([limited.status, limited.body.error?.code]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    // The asset API's reads are the other class: still answered.
    await keyedClient(t.app, KEY).get("/api/assets").expect(200);
  });

  it("takes one repeated `tags` field per tag up to the tag cap (64); 65 tags is INVALID_BODY, a flood of fields MALFORMED_MULTIPART", async () => {
    t = await makeTestApp();
    const tagged = (count: number) => {
      const parts = [{ name: "tags", body: "input" }, ...Array.from({ length: count - 1 }, (_, i) => ({ name: "tags", body: `t${i}` }))];
      return multipart([
        ...parts,
        { name: "name", body: "many.bin" },
        { name: "user_metadata", body: "{}" },
        { name: "file", filename: "many.bin", contentType: "application/octet-stream", body: Buffer.from(`tags ${count}`) },
      ]);
    };
    const send = (body: { body: Buffer; contentType: string }) =>
      keyedClient(t!.app, KEY).post("/api/assets").set("Content-Type", body.contentType).send(body.body);
    const full = await send(tagged(MAX_TAGS_PER_ASSET));
    expect(full.status, JSON.stringify(full.body)).toBe(201);
    expect(full.body.tags).toHaveLength(MAX_TAGS_PER_ASSET);
    const over = await send(tagged(MAX_TAGS_PER_ASSET + 1));
    expect([over.status, over.body.error?.code]).toEqual([400, "INVALID_BODY"]);
    expect(over.body.error.message).toMatch(/^tags/);
    const flood = await send(tagged(200));
    expect([flood.status, flood.body.error?.code]).toEqual([400, "MALFORMED_MULTIPART"]);
    // /api/upload/image keeps its own small form.
    const image = multipart([
      ...Array.from({ length: 17 }, (_, i) => ({ name: `f${i}`, body: "x" })),
      { name: "image", filename: "a.png", contentType: "image/png", body: await noisePng(2, 2) },
    ]);
    const refused = await keyedClient(t.app, KEY).post("/api/upload/image").set("Content-Type", image.contentType).send(image.body);
    expect([refused.status, refused.body.code]).toEqual([400, "malformed_multipart"]);
  });

  it("streams a large body through the hasher to disk without holding it (64 MiB, memory bounded)", async () => {
    t = await makeTestApp();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const chunk = Buffer.alloc(1024 * 1024, 0x5a);
    const res = await streamed(t, async (write, end) => {
      write(head);
      for (let i = 0; i < 64; i++) {
        if (!write(chunk)) await pause(2);
        peak = Math.max(peak, process.memoryUsage().rss);
      }
      write(tail);
      end();
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.size).toBe(64 * 1024 * 1024);
    // Client and server share this process: a bound that a body held whole (64 MiB, twice over while concatenated) would break.
    expect(peak - rssBefore).toBeLessThan(56 * 1024 * 1024);
  });
});
