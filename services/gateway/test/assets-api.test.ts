import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestListener } from "node:http";
import type { ChosenBlobStore } from "@app/blobs";
import { blake3Hex } from "@app/testkit/assets";
import { assetModes as modes } from "@app/testkit/asset-modes";
import { startAssetGateway, type AssetGateway } from "./asset-modes.ts";
import { solidPng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * ComfyUI's asset API through the real gateway, in both modes: embedded (filesystem store,
 * SQLite records, in-process jobs) and at scale (Redis queue, S3 store on s3rver, PostgreSQL
 * records). A client uploads, checks hashes, makes a second record from the hash without bytes,
 * lists by tags with paging, renames, deletes records (the bytes stay, as ComfyUI keeps content).
 * ComfyUI's own test files' behaviours are the upload service's (services/upload/test/comfy-asset-api*.test.ts).
 */

const KEY = "assets-api-test-key";
const png = (seed: number): Promise<Buffer> => solidPng(6, 5, { r: seed % 256, g: (seed * 7) % 256, b: (seed * 13) % 256 });
const hexOf = blake3Hex;

describe.each(modes)("asset API through the gateway: $name", (mode) => {
  let app: RequestListener;
  let store: ChosenBlobStore;
  let gateway: AssetGateway | undefined;

  beforeAll(async () => {
    gateway = await startAssetGateway(mode, [KEY]);
    ({ app, blobs: store } = gateway);
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
  });

  const api = () => ({
    get: (path: string) => keyedClient(app, KEY).get(path),
    head: (path: string) => keyedClient(app, KEY).head(path),
    post: (path: string, body?: unknown) =>
      (body === undefined
        ? request(app).post(path)
        : request(app)
            .post(path)
            .send(body as object)
      ).set("x-api-key", KEY),
    put: (path: string, body: unknown) =>
      keyedClient(app, KEY)
        .put(path)
        .send(body as object),
    del: (path: string, body?: unknown) =>
      (body === undefined
        ? request(app).delete(path)
        : request(app)
            .delete(path)
            .send(body as object)
      ).set("x-api-key", KEY),
  });

  it("upload, HEAD, from-hash without bytes, list by tags with paging, rename, delete one (bytes stay), delete the last (bytes gone)", async () => {
    const c = api();
    const bytes = await png(1);
    const hex = hexOf(bytes);
    const up = await keyedClient(app, KEY)
      .post("/api/upload/image")
      .attach("image", bytes, "cat.png")
      .field("type", "input")
      .field("subfolder", "Pets")
      .expect(200);
    expect(up.body.name).toBe(`${hex}.png`);

    // The upload made a record, tagged with its type and subfolder.
    const listed = await c.get("/api/assets?include_tags=input,pets").expect(200);
    expect(listed.body.total).toBe(1);
    const uploaded = listed.body.assets[0];
    expect(uploaded).toMatchObject({
      name: `${hex}.png`,
      hash: `blake3:${hex}`,
      asset_hash: `blake3:${hex}`,
      size: bytes.length,
      mime_type: "image/png",
      tags: ["input", "pets"],
    });
    // A re-upload of the same bytes to the same place finds the same record.
    await keyedClient(app, KEY)
      .post("/upload/image")
      .attach("image", bytes, "again.png")
      .field("type", "input")
      .field("subfolder", "Pets")
      .expect(200);
    expect((await c.get("/assets?include_tags=pets").expect(200)).body.total).toBe(1);

    const head = await c.head(`/api/assets/hash/blake3:${hex}`).expect(200);
    expect(head.text ?? "").toBe("");
    expect(head.headers["content-length"]).toBe("0");
    await c.head(`/assets/hash/blake3:${"0".repeat(64)}`).expect(404);
    await c.head(`/api/assets/hash/blake3:${hex.toUpperCase()}`).expect(200); // read lower-cased, as ComfyUI does
    await c.head(`/api/assets/hash/sha256:${hex}`).expect(400);
    await c.head(`/api/assets/hash/${hex}`).expect(400);
    await request(app).head(`/api/assets/hash/blake3:${hex}`).expect(401);

    const objectsBefore = (await store.list()).length;
    const second = await c
      .post("/api/assets/from-hash", {
        hash: `blake3:${hex}`,
        name: "cat for training.png",
        tags: ["models", "LoRAs", "models"],
        user_metadata: { epoch: 3 },
      })
      .expect(201);
    expect(second.body).toMatchObject({
      name: "cat for training.png",
      hash: `blake3:${hex}`,
      size: bytes.length,
      mime_type: "image/png",
      tags: ["models", "LoRAs"],
      user_metadata: { epoch: 3 },
      created_new: false,
    });
    expect(second.body.id).not.toBe(uploaded.id);
    expect((await store.list()).length).toBe(objectsBefore);
    await c.post("/api/assets/from-hash", { hash: `blake3:${"1".repeat(64)}` }).expect(404);

    // More records to page through: four by hash (no bytes sent) and one other upload.
    const other = await png(2);
    await keyedClient(app, KEY).post("/api/upload/image").attach("image", other, "dog.png").field("type", "output").expect(200);
    for (let i = 0; i < 4; i++)
      await c.post("/assets/from-hash", { hash: `blake3:${hex}`, name: `batch ${i}.png`, tags: ["batch", "models"] }).expect(201);

    const models = (await c.get("/api/assets?include_tags=models&sort=name&order=asc&limit=500").expect(200)).body;
    expect(models.total).toBe(5);
    expect(models.assets.map((a: { name: string }) => a.name)).toEqual([
      "batch 0.png",
      "batch 1.png",
      "batch 2.png",
      "batch 3.png",
      "cat for training.png",
    ]);
    // Keyset paging (next_cursor) and offset paging walk the same order, each record once.
    const byCursor: string[] = [];
    let url = "/api/assets?include_tags=models&sort=name&order=asc&limit=2";
    for (let n = 0; n < 10; n++) {
      const page = (await c.get(url).expect(200)).body;
      expect(page.total).toBe(5 + n); // the late ones count, but sort before the cursor
      byCursor.push(...page.assets.map((a: { name: string }) => a.name));
      if (!page.has_more) {
        expect(page.next_cursor).toBeUndefined();
        break;
      }
      url = `/api/assets?include_tags=models&sort=name&order=asc&limit=2&after=${page.next_cursor}`;
      // A record added while paging does not shift or repeat the pages.
      await c.post("/api/assets/from-hash", { hash: `blake3:${hex}`, name: "a late one.png", tags: ["models", "late"] }).expect(201);
    }
    expect(byCursor).toEqual(models.assets.map((a: { name: string }) => a.name));
    const byOffset = (await c.get("/api/assets?include_tags=batch&exclude_tags=late&sort=name&order=desc&limit=3&offset=3").expect(200))
      .body;
    expect(byOffset).toMatchObject({ total: 4, has_more: false });
    expect(byOffset.assets.map((a: { name: string }) => a.name)).toEqual(["batch 0.png"]);
    expect((await c.get("/api/assets?name_contains=TRAINING").expect(200)).body.assets.map((a: { id: string }) => a.id)).toEqual([
      second.body.id,
    ]);

    // Rename, retag, tag edits.
    const renamed = await c.put(`/api/assets/${second.body.id}`, { name: "renamed.png" }).expect(200);
    expect(renamed.body).toMatchObject({ id: second.body.id, name: "renamed.png", tags: ["models", "LoRAs"] });
    expect(renamed.body.updated_at > second.body.updated_at).toBe(true);
    expect((await c.get(`/api/assets/${second.body.id.toUpperCase()}`).expect(200)).body.name).toBe("renamed.png");
    expect((await c.post(`/api/assets/${second.body.id}/tags`, { tags: ["LoRAs", "Favourite"] }).expect(200)).body).toEqual({
      added: ["Favourite"],
      already_present: ["LoRAs"],
      total_tags: ["models", "LoRAs", "Favourite"],
    });
    expect((await c.del(`/assets/${second.body.id}/tags`, { tags: ["models", "nope"] }).expect(200)).body).toEqual({
      removed: ["models"],
      not_present: ["nope"],
      total_tags: ["LoRAs", "Favourite"],
    });
    const tags = (await c.get("/api/tags?limit=3").expect(200)).body;
    expect(tags).toEqual({
      tags: [
        { name: "models", count: 6 },
        { name: "batch", count: 4 },
        { name: "late", count: 2 },
      ],
      total: 8,
      has_more: true,
    });
    expect((await c.get("/tags?prefix=Lo&order=name_asc").expect(200)).body.tags).toEqual([{ name: "LoRAs", count: 1 }]);

    // The content, under /api/view's rules.
    const content = await c
      .get(`/api/assets/${second.body.id}/content`)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(Buffer.compare(content.body as Buffer, bytes)).toBe(0);
    expect(content.headers).toMatchObject({
      etag: `"${hex}"`,
      "content-type": "image/png",
      "cache-control": "private, max-age=31536000, immutable",
    });
    expect(content.headers["content-disposition"]).toBe("attachment; filename*=UTF-8''renamed.png");
    await c.get(`/api/assets/${second.body.id}/content`).set("if-none-match", `"${hex}"`).expect(304);
    const ranged = await c.get(`/api/assets/${second.body.id}/content?disposition=inline`).set("range", "bytes=0-3").expect(206);
    expect(ranged.headers["content-range"]).toBe(`bytes 0-3/${bytes.length}`);
    await c
      .get(`/api/assets/${second.body.id}/content`)
      .set("range", `bytes=${bytes.length + 10}-`)
      .expect(416);

    // Deleting records: the bytes stay, also after the last record (ComfyUI keeps content).
    const all = (await c.get(`/api/assets?limit=500`).expect(200)).body.assets as { id: string; hash: string }[];
    const naming = all.filter((a) => a.hash === `blake3:${hex}`);
    expect(naming.length).toBe(8);
    await c.del(`/api/assets/${uploaded.id}`).expect(204);
    await c.get(`/api/assets/${uploaded.id}`).expect(404);
    await c.del(`/api/assets/${uploaded.id}`).expect(404);
    await c.head(`/api/assets/hash/blake3:${hex}`).expect(200);
    const rest = naming.filter((a) => a.id !== uploaded.id);
    for (const a of rest.slice(0, -1)) await c.del(`/assets/${a.id}`).expect(204);
    await c.head(`/api/assets/hash/blake3:${hex}`).expect(200);
    expect(await store.stat(hex)).not.toBeNull();
    await c.del(`/api/assets/${rest.at(-1)!.id}`).expect(204);
    await c.head(`/api/assets/hash/blake3:${hex}`).expect(200);
    expect(await store.stat(hex)).not.toBeNull();
    await c.get(`/api/view?filename=${hex}.png`).expect(200);
    expect((await c.post("/api/assets/from-hash", { hash: `blake3:${hex}` }).expect(201)).body.name).toBe(hex);
  });

  it("bad input of each route answers 4xx in ComfyUI's envelope {error: {code, message, details}}", async () => {
    const c = api();
    const bytes = await png(3);
    await keyedClient(app, KEY).post("/api/upload/image").attach("image", bytes, "x.png").expect(200);
    const id = (await c.post("/api/assets/from-hash", { hash: `blake3:${hexOf(bytes)}`, tags: ["t"] }).expect(201)).body.id as string;
    const unknown = "00000000-0000-4000-8000-000000000000";
    const cases: [string, () => request.Test, number, string][] = [
      ["from-hash bad hash", () => c.post("/api/assets/from-hash", { hash: "blake3:xyz" }), 400, "invalid_body"],
      [
        "from-hash bad JSON",
        () => c.post("/api/assets/from-hash").set("content-type", "application/json").send("{nope"),
        400,
        "invalid_json",
      ],
      [
        "from-hash JSON not an object",
        () => c.post("/api/assets/from-hash").set("content-type", "application/json").send("[1]"),
        400,
        "invalid_json",
      ],
      ["from-hash no body", () => c.post("/api/assets/from-hash"), 400, "invalid_json"],
      [
        "from-hash tags not strings",
        () => c.post("/api/assets/from-hash", { hash: `blake3:${hexOf(bytes)}`, tags: [1, 2] }),
        400,
        "invalid_body",
      ],
      [
        "from-hash metadata not an object",
        () => c.post("/api/assets/from-hash", { hash: `blake3:${hexOf(bytes)}`, user_metadata: "x" }),
        400,
        "invalid_body",
      ],
      ["from-hash body too large", () => c.post("/api/assets/from-hash", { hash: "x", pad: "y".repeat(70_000) }), 413, "payload_too_large"],
      ["list limit 0", () => c.get("/api/assets?limit=0"), 400, "invalid_query"],
      ["list limit 501", () => c.get("/api/assets?limit=501"), 400, "invalid_query"],
      ["list limit not a number", () => c.get("/api/assets?limit=ten"), 400, "invalid_query"],
      ["list limit twice", () => c.get("/api/assets?limit=1&limit=2"), 400, "invalid_query"],
      ["list bad sort", () => c.get("/api/assets?sort=color"), 400, "invalid_query"],
      ["list bad order", () => c.get("/api/assets?order=up"), 400, "invalid_query"],
      ["list negative offset", () => c.get("/api/assets?offset=-1"), 400, "invalid_query"],
      ["list bad cursor", () => c.get("/api/assets?after=%%%"), 400, "invalid_cursor"],
      [
        "list cursor of another sort",
        () =>
          c.get(
            `/api/assets?sort=name&after=${Buffer.from(JSON.stringify({ s: "size", o: "desc", v: 1, id: unknown })).toString("base64url")}`,
          ),
        400,
        "invalid_cursor",
      ],
      ["list offset and a bad cursor", () => c.get("/api/assets?offset=2&after=abc"), 400, "invalid_cursor"],
      ["get unknown id", () => c.get(`/api/assets/${unknown}`), 404, "asset_not_found"],
      ["get malformed id", () => c.get("/api/assets/not-an-id"), 404, "asset_not_found"],
      ["content unknown id", () => c.get(`/api/assets/${unknown}/content`), 404, "asset_not_found"],
      ["put unknown id", () => c.put(`/api/assets/${unknown}`, { name: "x" }), 404, "asset_not_found"],
      ["put bad JSON", () => c.put(`/api/assets/${id}`, "{").set("content-type", "application/json"), 400, "invalid_json"],
      ["put nothing to change", () => c.put(`/api/assets/${id}`, {}), 400, "invalid_body"],
      ["put empty name", () => c.put(`/api/assets/${id}`, { name: "  " }), 400, "invalid_body"],
      ["put tags not strings", () => c.put(`/api/assets/${id}`, { tags: ["a", { b: 1 }] }), 400, "invalid_body"],
      ["add tags unknown id", () => c.post(`/api/assets/${unknown}/tags`, { tags: ["a"] }), 404, "asset_not_found"],
      ["add tags not strings", () => c.post(`/api/assets/${id}/tags`, { tags: [true] }), 400, "invalid_body"],
      ["add no tags", () => c.post(`/api/assets/${id}/tags`, { tags: [] }), 400, "invalid_body"],
      [
        "remove tags bad JSON",
        () => c.del(`/api/assets/${id}/tags`).set("content-type", "application/json").send("nope"),
        400,
        "invalid_json",
      ],
      ["remove tags unknown id", () => c.del(`/api/assets/${unknown}/tags`, { tags: ["a"] }), 404, "asset_not_found"],
      ["delete unknown id", () => c.del(`/api/assets/${unknown}`), 404, "asset_not_found"],
      ["tags limit 0", () => c.get("/api/tags?limit=0"), 400, "invalid_query"],
      ["tags bad order", () => c.get("/api/tags?order=random"), 400, "invalid_query"],
      ["empty id", () => c.del("/api/assets//tags", { tags: ["a"] }), 404, "not_found"],
      ["upload that is not multipart", () => c.post("/api/assets", {}), 415, "unsupported_media_type"],
      ["a method the API lacks", () => c.put("/api/assets", {}), 404, "not_found"],
      ["a path under /assets it lacks", () => c.get("/assets/a/b/c"), 404, "not_found"],
      ["no key", () => request(app).get("/api/assets"), 401, "unauthorized"],
      ["wrong key", () => keyedClient(app, "wrong").get("/api/tags"), 401, "unauthorized"],
    ];
    for (const [what, send, status, code] of cases) {
      const res = await send();
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.body, what).toMatchObject({ error: { code: code.toUpperCase(), details: expect.any(Object) } });
      expect(typeof res.body.error.message, what).toBe("string");
    }
    // The record survived every refused change.
    expect((await c.get(`/api/assets/${id}`).expect(200)).body.tags).toEqual(["t"]);
  });
});
