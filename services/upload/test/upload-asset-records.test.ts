import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { blake3Hex, KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { noisePng, solidPng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

/** What uploads leave in the asset API: their records, the mask's links, and the store kept consistent with deletes. */
let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.close();
});

const assets = async (query: string) => (await keyedClient(t.app, KEY).get(`/api/assets?${query}`).expect(200)).body;

describe("uploads make asset records", () => {
  it("an image upload: one record per type and subfolder, found again on a re-upload", async () => {
    const png = await noisePng(5, 4);
    const hex = blake3Hex(png);
    for (let i = 0; i < 3; i++) {
      await keyedClient(t.app, KEY)
        .post("/api/upload/image")
        .attach("image", png, "a.png")
        .field("type", "input")
        .field("subfolder", "clipspace")
        .expect(200);
    }
    await keyedClient(t.app, KEY).post("/upload/image").attach("image", png, "a.png").expect(200);
    const list = await assets("sort=name&order=asc");
    expect(list.total).toBe(2);
    expect(list.assets.map((a: { tags: string[] }) => a.tags).sort()).toEqual([["input", "clipspace"], ["output"]]);
    for (const a of list.assets)
      expect(a).toMatchObject({ name: `${hex}.png`, hash: `blake3:${hex}`, size: png.length, mime_type: "image/png" });
  });

  it("a mask upload: the mask's record links its original and both derivatives, each derivative has a record linking back", async () => {
    const original = await noisePng(8, 8);
    const up = await keyedClient(t.app, KEY)
      .post("/api/upload/image")
      .attach("image", original, "o.png")
      .field("type", "input")
      .expect(200);
    const mask = await solidPng(8, 8, { r: 0, g: 0, b: 0, alpha: 0.5 });
    const masked = await request(t.app)
      .post("/api/upload/mask")
      .set("X-API-Key", KEY)
      .attach("image", mask, "clipspace-mask.png")
      .field("original_ref", JSON.stringify({ filename: up.body.name, subfolder: "", type: "input" }))
      .field("type", "input")
      .field("subfolder", "clipspace")
      .expect(200);
    const { related_files: files } = masked.body.metadata;

    const masks = await assets("include_tags=mask");
    expect(masks.total).toBe(1);
    expect(masks.assets[0]).toMatchObject({ name: files.mask, tags: ["input", "mask", "clipspace"], metadata: masked.body.metadata });
    expect(masks.assets[0].metadata.original_hash).toBe(`blake3:${blake3Hex(original)}`);

    const derived = await assets("include_tags=derived&sort=name&order=asc");
    expect(derived.total).toBe(2);
    const byKind = Object.fromEntries(derived.assets.map((a: { metadata: { derived: string } }) => [a.metadata.derived, a]));
    expect(byKind.painted).toMatchObject({ name: files.painted, tags: ["input", "derived", "painted", "clipspace"] });
    expect(byKind.paint).toMatchObject({ name: files.paint, tags: ["input", "derived", "paint", "clipspace"] });
    for (const a of derived.assets) {
      expect(a.metadata).toMatchObject({ original_hash: `blake3:${blake3Hex(original)}`, mask_hash: `blake3:${blake3Hex(mask)}` });
      // Each record's content is the stored derivative.
      const body = (
        await keyedClient(t.app, KEY)
          .get(`/api/assets/${a.id}/content`)
          .buffer(true)
          .parse((res, cb) => binary(res, cb))
          .expect(200)
      ).body as Buffer;
      expect(`${blake3Hex(body)}.png`).toBe(a.name);
    }
    // Re-sending the same mask finds the same records.
    await keyedClient(t.app, KEY)
      .post("/api/upload/mask")
      .attach("image", mask, "m.png")
      .field("original_ref", up.body.name)
      .field("type", "input")
      .field("subfolder", "clipspace")
      .expect(200);
    expect((await assets("include_tags=clipspace")).total).toBe(3);
  });
});

describe("deletes keep the content (as ComfyUI keeps it after its last reference)", () => {
  it("racing re-uploads and deletes: every record names stored bytes, and the bytes outlive the last record", async () => {
    const png = await noisePng(6, 6);
    const hex = blake3Hex(png);
    for (let round = 0; round < 3; round++) {
      await keyedClient(t.app, KEY).post("/api/upload/image").attach("image", png, "a.png").field("subfolder", `r${round}`).expect(200);
      const ids = (await assets(`include_tags=r${round}`)).assets.map((a: { id: string }) => a.id);
      await Promise.all([
        ...ids.map((id: string) => keyedClient(t.app, KEY).delete(`/api/assets/${id}`).expect(204)),
        ...Array.from({ length: 3 }, (_, i) =>
          keyedClient(t.app, KEY)
            .post("/api/upload/image")
            .attach("image", png, "a.png")
            .field("subfolder", `other${round}-${i}`)
            .expect(200),
        ),
      ]);
      const left = (await assets(`limit=500`)).assets.filter((a: { hash: string }) => a.hash === `blake3:${hex}`);
      for (const a of left) await keyedClient(t.app, KEY).get(`/api/assets/${a.id}/content`).expect(200);
      for (const a of left) await keyedClient(t.app, KEY).delete(`/api/assets/${a.id}`).expect(204);
      expect(await t.blobs.stat(hex)).not.toBeNull();
      await keyedClient(t.app, KEY).head(`/api/assets/hash/blake3:${hex}`).expect(200);
      await keyedClient(t.app, KEY).get(`/api/view?filename=${hex}.png`).expect(200);
    }
  });
});

function binary(
  res: { on(event: string, listener: (chunk: Buffer) => void): unknown },
  cb: (err: Error | null, body: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  res.on("data", (d: Buffer) => chunks.push(d));
  res.on("end", () => cb(null, Buffer.concat(chunks)));
}
