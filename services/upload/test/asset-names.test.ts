import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { blake3Hex, KEY, makeTestApp, servedApps, type TestApp } from "./helpers.ts";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";
import { tusUpload } from "@app/testkit/tus-client";

/**
 * Every name an upload records keeps the extension of the name it was given, as ComfyUI's
 * `upload_from_temp_path` records `<hash><extension>`: `loader_path`, `display_name` and
 * `user_metadata.filename` agree, through POST /api/assets and through tus.
 */
const apps = servedApps();
const opened: TestApp[] = [];
afterEach(async () => {
  await apps.closeAll();
  for (const t of opened.splice(0)) await t.close();
});

const MODEL_TAGS = ["models", "model_type:checkpoints"];

describe("recorded names", () => {
  it("a model POSTed as my_model.safetensors is <hash>.safetensors in loader_path, display_name and user_metadata.filename", async () => {
    const t = await makeTestApp();
    opened.push(t);
    const bytes = randomBytes(4096);
    const hex = blake3Hex(bytes);
    const res = await keyedClient(t.app, KEY)
      .post("/api/assets")
      .field("tags", JSON.stringify(MODEL_TAGS))
      .attach("file", bytes, { filename: "my_model.safetensors", contentType: "application/octet-stream" })
      .expect(201);
    expect(res.body).toMatchObject({
      name: "my_model.safetensors",
      loader_path: `${hex}.safetensors`,
      display_name: `checkpoints/${hex}.safetensors`,
      user_metadata: { filename: `${hex}.safetensors` },
    });
    // A second upload of the same bytes under another name is a record only; its filename keeps its own extension.
    const again = await keyedClient(t.app, KEY)
      .post("/api/assets")
      .field("tags", JSON.stringify(["input"]))
      .attach("file", bytes, { filename: "copy.ckpt", contentType: "application/octet-stream" })
      .expect(200);
    expect([again.body.name, again.body.user_metadata.filename, again.body.created_new]).toEqual(["copy.ckpt", `${hex}.ckpt`, false]);
  });

  it("a name without an extension records the probed one; a filename the client sends is kept as sent", async () => {
    const t = await makeTestApp();
    opened.push(t);
    const png = await noisePng(3, 3);
    const hex = blake3Hex(png);
    const plain = await keyedClient(t.app, KEY)
      .post("/api/assets")
      .field("tags", "input")
      .attach("file", png, { filename: "untitled" })
      .expect(201);
    expect([plain.body.name, plain.body.user_metadata.filename]).toEqual(["untitled", `${hex}.png`]);
    const own = await keyedClient(t.app, KEY)
      .post("/api/assets")
      .field("tags", "input")
      .field("user_metadata", JSON.stringify({ filename: "mine.png" }))
      .attach("file", png, { filename: "x.png" })
      .expect(200);
    expect(own.body.user_metadata.filename).toBe("mine.png");
  });

  it("a tus upload of my_model.safetensors records the same names", async () => {
    const t = await makeTestApp();
    const base = await apps.serve(t);
    const bytes = randomBytes(70_000);
    const hex = blake3Hex(bytes);
    const done = await tusUpload(bytes, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      metadata: { filename: "my_model.safetensors", tags: MODEL_TAGS.join(",") },
    });
    const asset = (await keyedClient(t.app, KEY).get(`/api/assets/${done.assetId}`).expect(200)).body;
    expect([asset.loader_path, asset.display_name, asset.user_metadata.filename]).toEqual([
      `${hex}.safetensors`,
      `checkpoints/${hex}.safetensors`,
      `${hex}.safetensors`,
    ]);
  });
});
