import { randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * ComfyUI's `tests-unit/assets_test/test_preview_url.py`, case by case, against the asset API.
 * The bytes are upstream's `make_asset_bytes` (no magic number, no text), so a file's type comes
 * from its name's extension as ComfyUI's `mimetypes.guess_type` gives it. One case is not
 * ported as written: `test_preview_url_serves_the_asset` asserts upstream's unsigned
 * `/api/view?type=&filename=` shape, and ours is a signed, expiring `/api/view` URL (asserted
 * there instead); what it serves is asserted as upstream does.
 */
type Json = Record<string, any>;

/**
 * Upstream's make_asset_bytes (deterministic per name), with the name appended: upstream's seed
 * takes 251 values, and here every case shares one store, where equal bytes are one content whose
 * type the first upload set. The name (which holds the case's scope) keeps each case's bytes its own.
 */
const makeAssetBytes = (name: string, size = 8192): Buffer => {
  const seed = [...name].reduce((n, c) => n + c.charCodeAt(0), 0) % 251;
  return Buffer.concat([Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed) % 256)), Buffer.from(name)]);
};

function binary(
  res: { on(event: string, listener: (chunk: Buffer) => void): unknown },
  cb: (err: Error | null, body: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  res.on("data", (d: Buffer) => chunks.push(d));
  res.on("end", () => cb(null, Buffer.concat(chunks)));
}

describe("test_preview_url.py", () => {
  let t: TestApp;
  let scope: string;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());
  beforeEach(() => {
    scope = randomUUID().slice(0, 6);
  });

  const http = () => keyedClient(t.app, KEY);
  /** Upstream's asset_factory: the file part named `name`, sent as application/octet-stream. */
  const assetFactory = async (name: string, tags: string[], data: Buffer, extra: Record<string, string> = {}): Promise<Json> => {
    let r = http().post("/api/assets").field("tags", JSON.stringify(tags)).field("name", name).field("user_metadata", "{}");
    for (const [k, v] of Object.entries(extra)) r = r.field(k, v);
    const res = await r.attach("file", data, { filename: name, contentType: "application/octet-stream" });
    expect([200, 201], JSON.stringify(res.body)).toContain(res.status);
    return res.body as Json;
  };
  /** A GET of a preview URL with no key at all, as an <img> makes it. */
  const bare = (url: string) => request(t.app).get(url).buffer(true).parse(binary);

  it("test_preview_url_serves_the_asset (our signed shape in place of upstream's unsigned one)", async () => {
    const name = `preview-url-${scope}.png`;
    const data = makeAssetBytes(name, 2048);
    const body = await assetFactory(name, ["output", "unit-tests", scope], data);
    expect(body.mime_type).toBe("image/png");
    expect(body.preview_url).toMatch(/^\/api\/view\?asset=blake3:[0-9a-f]{64}&mime=image%2Fpng&expires=\d+&signature=[\w-]{43}$/);
    const r = await http().get(body.preview_url).buffer(true).parse(binary);
    expect(r.status).toBe(200);
    expect(Buffer.compare(r.body as Buffer, data)).toBe(0);
    // Typed by its name only: the browser is told not to guess otherwise.
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("test_preview_url_honours_range_requests", async () => {
    const name = `preview-range-${scope}.png`;
    const data = makeAssetBytes(name, 2048);
    const body = await assetFactory(name, ["output", "unit-tests", scope], data);
    const r = await http().get(body.preview_url).set("Range", "bytes=10-109").buffer(true).parse(binary);
    expect(r.status).toBe(206);
    expect(Buffer.compare(r.body as Buffer, data.subarray(10, 110))).toBe(0);
  });

  it("test_preview_url_needs_no_user_header", async () => {
    const name = `preview-anon-${scope}.png`;
    const data = makeAssetBytes(name, 1024);
    const body = await assetFactory(name, ["input", "unit-tests", scope], data);
    const r = await bare(body.preview_url);
    expect(r.status).toBe(200);
    expect(Buffer.compare(r.body as Buffer, data)).toBe(0);
  });

  it("test_preview_url_survives_tag_removal", async () => {
    const name = `preview-tags-${scope}.png`;
    const body = await assetFactory(name, ["input", "unit-tests", scope], makeAssetBytes(name, 2048));
    expect(body.preview_url).toBeTruthy();
    const r = await http()
      .delete(`/api/assets/${body.id}/tags`)
      .send({ tags: ["input"] });
    expect(r.status).toBe(200);
    const after = (await http().get(`/api/assets/${body.id}`)).body as Json;
    expect(after.tags).not.toContain("input");
    expect(after.preview_url).toBe(body.preview_url);
    expect((await http().get(body.preview_url)).status).toBe(200);
  });

  it("test_preview_url_is_the_nominated_preview_when_one_is_set", async () => {
    const thumbName = `preview-id-${scope}_thumb.png`;
    const thumbData = makeAssetBytes(thumbName, 1024);
    const thumb = await assetFactory(thumbName, ["input", "unit-tests", scope], thumbData);
    const modelName = `preview-id-${scope}.safetensors`;
    const model = await assetFactory(
      modelName,
      ["models", "model_type:checkpoints", "unit-tests", scope],
      makeAssetBytes(modelName, 2048),
      { preview_id: thumb.id },
    );
    expect(model.preview_id).toBe(thumb.id);
    expect(model.preview_url).toBe(thumb.preview_url);
    const got = await http().get(model.preview_url).buffer(true).parse(binary);
    expect(got.status).toBe(200);
    expect(Buffer.compare(got.body as Buffer, thumbData)).toBe(0);
  });

  it("test_soft_deleted_preview_is_not_advertised", async () => {
    const thumbName = `preview-gone-${scope}_thumb.png`;
    const thumb = await assetFactory(thumbName, ["input", "unit-tests", scope], makeAssetBytes(thumbName, 1024));
    const parentName = `preview-gone-${scope}_parent.png`;
    const parent = await assetFactory(parentName, ["input", "unit-tests", scope], makeAssetBytes(parentName, 1024));
    const r = await http().put(`/api/assets/${parent.id}`).send({ preview_id: thumb.id });
    expect(r.status).toBe(200);
    expect(r.body.preview_url).toBe(thumb.preview_url);
    expect([200, 204]).toContain((await http().delete(`/api/assets/${thumb.id}`)).status);
    const after = (await http().get(`/api/assets/${parent.id}`)).body as Json;
    expect(after.preview_id).toBe(thumb.id);
    expect(after.preview_url).toBeUndefined();
  });

  it("test_no_preview_url_for_content_a_browser_cannot_render", async () => {
    const name = `preview-model-${scope}.safetensors`;
    const body = await assetFactory(name, ["models", "model_type:checkpoints", "unit-tests", scope], makeAssetBytes(name, 2048));
    expect(body.preview_url).toBeUndefined();
    const listed = (await http().get("/api/assets").query({ include_tags: scope })).body.assets as Json[];
    expect(listed.map((a) => a.preview_url)).toEqual([undefined]);
  });

  it("test_text_asset_gets_a_preview_url_that_serves_its_content", async () => {
    const name = `preview-text-${scope}.txt`;
    const data = Buffer.concat([Buffer.from("line one\nline two\n"), makeAssetBytes(name, 256)]);
    const body = await assetFactory(name, ["output", "unit-tests", scope], data);
    expect(body.mime_type).toBe("text/plain");
    expect(body.preview_url).toBeTruthy();
    const r = await http().get(body.preview_url).buffer(true).parse(binary);
    expect(r.status).toBe(200);
    expect(Buffer.compare(r.body as Buffer, data)).toBe(0);
  });

  it("test_dangerous_text_preview_is_still_forced_to_download", async () => {
    const name = `preview-html-${scope}.html`;
    const body = await assetFactory(name, ["output", "unit-tests", scope], Buffer.from(`<html><script>alert('${scope}')</script></html>`));
    expect(body.preview_url).toBeTruthy();
    const r = await http().get(body.preview_url).buffer(true).parse(binary);
    expect(r.status).toBe(200);
    expect(String(r.headers["content-type"]).toLowerCase()).toMatch(/^application\/octet-stream/);
    expect(String(r.headers["content-disposition"]).toLowerCase()).toContain("attachment");
  });

  it("a name whose extension names no type, with bytes no probe reads, stays application/octet-stream with no preview", async () => {
    const name = `weights-${scope}.gguf`;
    const body = await assetFactory(name, ["models", "model_type:checkpoints", scope], makeAssetBytes(name, 1024));
    expect([body.mime_type, body.preview_url]).toEqual(["application/octet-stream", undefined]);
  });
});
