import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blake3Hex, expectUploadError, KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

let t: TestApp;
let png: Buffer;
let name: string;
beforeAll(async () => {
  t = await makeTestApp();
  png = await noisePng(40, 30);
  const res = await keyedClient(t.app, KEY).post("/api/upload/image").attach("image", png, { filename: "a.png" });
  name = res.body.name;
});
afterAll(async () => {
  await t.close();
});

const jsonOf = (body: unknown): unknown => (Buffer.isBuffer(body) ? JSON.parse(body.toString()) : body);
const view = (query: string, path = "/api/view") => keyedClient(t.app, KEY).get(`${path}?${query}`).buffer(true);

describe("GET /api/view", () => {
  it("streams the bytes with Content-Type, the hash as ETag, and immutable caching for the key's holder only (private)", async () => {
    const res = await view(`filename=${name}&type=input&subfolder=clipspace`);
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body).equals(png)).toBe(true);
    expect(res.headers["content-type"]).toBe("image/png");
    expect(res.headers.etag).toBe(`"${blake3Hex(png)}"`);
    expect(res.headers["cache-control"]).toBe("private, max-age=31536000, immutable");
    expect(res.headers["content-length"]).toBe(String(png.length));
  });

  it("a signed preview URL (no key) may be cached by anyone, but never past its expiry", async () => {
    const asset = (await keyedClient(t.app, KEY).get("/api/assets").expect(200)).body.assets[0] as { id: string; preview_url: string };
    const expires = Number(new URL(asset.preview_url, "http://x").searchParams.get("expires"));
    const before = Math.floor(Date.now() / 1000);
    const res = await request(t.app).get(asset.preview_url).buffer(true).expect(200);
    const after = Math.ceil(Date.now() / 1000);
    const cache = /^public, max-age=(\d+), immutable$/.exec(String(res.headers["cache-control"]));
    expect(cache, String(res.headers["cache-control"])).not.toBeNull();
    const maxAge = Number(cache![1]);
    expect(maxAge).toBeLessThanOrEqual(expires - before);
    expect(maxAge).toBeGreaterThanOrEqual(expires - after);
    // The same asset's content, asked with the key, is private.
    expect((await keyedClient(t.app, KEY).get(`/api/assets/${asset.id}/content`).expect(200)).headers["cache-control"]).toBe(
      "private, max-age=31536000, immutable",
    );
  });

  it("accepts ComfyUI's ' [input]' suffix and the /view alias", async () => {
    const res = await view(`filename=${encodeURIComponent(`${name} [input]`)}`, "/view");
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body).equals(png)).toBe(true);
  });

  it("answers a matching If-None-Match with 304 and no body", async () => {
    const res = await view(`filename=${name}`).set("If-None-Match", `"${blake3Hex(png)}"`);
    expect(res.status).toBe(304);
    expect(res.body.length ?? 0).toBe(0);
    const miss = await view(`filename=${name}`).set("If-None-Match", `"${"0".repeat(64)}"`);
    expect(miss.status).toBe(200);
  });

  it("answers a Range with 206 and exactly those bytes", async () => {
    const res = await view(`filename=${name}`).set("Range", "bytes=10-19");
    expect(res.status).toBe(206);
    expect(res.headers["content-range"]).toBe(`bytes 10-19/${png.length}`);
    expect(Buffer.from(res.body).equals(png.subarray(10, 20))).toBe(true);
    const suffix = await view(`filename=${name}`).set("Range", "bytes=-5");
    expect(suffix.status).toBe(206);
    expect(Buffer.from(suffix.body).equals(png.subarray(png.length - 5))).toBe(true);
  });

  it("answers an unsatisfiable Range with 416 in the error shape", async () => {
    const res = await view(`filename=${name}`).set("Range", `bytes=${png.length + 10}-${png.length + 20}`);
    expect(res.status).toBe(416);
    expect(res.headers["content-range"]).toBe(`bytes */${png.length}`);
    expect(res.headers["cache-control"]).toBeUndefined();
    expectUploadError(jsonOf(res.body), "invalid_range");
  });

  it.each([
    ["an unknown hash", `filename=${"a".repeat(64)}.png`],
    ["a known hash with the wrong extension", "WRONG_EXT"],
    ["a path", "filename=../../etc/passwd"],
    ["an absolute path", "filename=%2Fetc%2Fpasswd"],
    ["no filename", ""],
    ["upper-case hex", "UPPER"],
  ])("%s: 404 not_found", async (_label, query) => {
    const q =
      query === "WRONG_EXT" ? `filename=${name.replace(".png", ".jpg")}` : query === "UPPER" ? `filename=${name.toUpperCase()}` : query;
    const res = await view(q);
    expect(res.status).toBe(404);
    expectUploadError(jsonOf(res.body), "not_found");
  });

  it("needs a key", async () => {
    const res = await request(t.app).get(`/api/view?filename=${name}`);
    expect(res.status).toBe(401);
    expectUploadError(res.body, "unauthorized");
  });
});
