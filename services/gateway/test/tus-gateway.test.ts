import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "@app/platform";
import { blake3Hex } from "@app/testkit/assets";
import { tusUpload } from "@app/testkit/tus-client";
import { assetModes as modes } from "@app/testkit/asset-modes";
import { startAssetGateway, type AssetGateway } from "./asset-modes.ts";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * A tus upload through the real gateway, as the web page (tus-js-client in the browser, same
 * origin) and any tus client send it: create with metadata, PATCH in chunks, drop, HEAD, resume,
 * and the asset it makes; embedded (filesystem) and at scale (S3 on s3rver, PostgreSQL, Redis).
 */
const KEY = "tus-gateway-test-key";

describe.each(modes)("tus through the gateway: $name", (mode) => {
  let gateway: AssetGateway | undefined;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    gateway = await startAssetGateway(mode, [KEY]);
    server = createHttpServer(gateway.app);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    server?.closeAllConnections();
    server?.close();
    await gateway?.close();
  });

  it("an upload dropped after its first chunks resumes from the stored offset and yields the asset", async () => {
    const bytes = randomBytes(12 * 1024 * 1024 + 5);
    const chunkSize = 3 * 1024 * 1024;
    const metadata = { filename: "lora.safetensors", tags: "models,model_type:loras", user_metadata: '{"epoch":3}' };
    const begun = await tusUpload(bytes, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      chunkSize,
      stopAfter: 2 * chunkSize,
      metadata,
    });
    const head = await request(gateway!.app).head(new URL(begun.url).pathname).set({ "X-API-Key": KEY, "Tus-Resumable": "1.0.0" });
    expect([head.status, Number(head.headers["upload-offset"])]).toEqual([200, 2 * chunkSize]);
    const done = await tusUpload(bytes, { uploadUrl: begun.url, key: KEY, chunkSize, metadata });
    expect(done.patchOffsets[0]).toBe(2 * chunkSize);
    const asset = await keyedClient(gateway!.app, KEY).get(`/api/assets/${done.assetId}`);
    expect(asset.body).toMatchObject({
      name: "lora.safetensors",
      asset_hash: `blake3:${blake3Hex(bytes)}`,
      size: bytes.length,
      user_metadata: { epoch: 3 },
    });
    expect(await gateway!.blobs.stat(blake3Hex(bytes))).toMatchObject({ size: bytes.length });
  });
});
