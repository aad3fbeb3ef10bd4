import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import request from "supertest";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NO_LIMITS } from "../src/domain/key-limits.ts";
import type { UploadSettings } from "../src/http/deps.ts";
import { blake3Hex, KEY, makeTestApp, OTHER_KEY, servedApps, type TestApp } from "./helpers.ts";
import { refusal, tusUpload } from "@app/testkit/tus-client";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * tus 1.0.0 at /api/assets/uploads with tus-js-client as shipped, over the filesystem store:
 * resume after a drop, the asset it yields, termination, expiry, owners, metadata, limits.
 * The S3 store and two replicas: tus-s3.test.ts.
 */
const apps = servedApps();
afterEach(() => apps.closeAll());

async function start(settings: Partial<UploadSettings> = {}): Promise<{ t: TestApp; base: string }> {
  const t = await makeTestApp({ settings });
  return { t, base: await apps.serve(t) };
}

const MODEL = { filename: "tiny.safetensors", tags: "models,model_type:checkpoints" };
const uploadsDir = (app: TestApp) => join(app.dataDir, "blobs", "uploads");
const head = (app: TestApp, url: string, key = KEY) => keyedClient(app.app, key).head(new URL(url).pathname).set("Tus-Resumable", "1.0.0");

describe("tus uploads", () => {
  it("an upload aborted halfway resumes from where it stopped and yields the asset (Asset-Id, hash, bytes)", async () => {
    const { t, base } = await start();
    const bytes = randomBytes(2 * 1024 * 1024 + 123);
    const chunkSize = 256 * 1024;
    const first = await tusUpload(bytes, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      chunkSize,
      stopAfter: bytes.length / 2,
      metadata: { ...MODEL, user_metadata: '{"source":"test"}' },
    });
    expect(first.assetId).toBeNull();
    expect(new URL(first.url).pathname).toMatch(/^\/api\/assets\/uploads\/[0-9a-f]{32}$/);
    const stoppedAt = first.patchOffsets.length * chunkSize;
    const half = await head(t, first.url);
    expect([half.status, Number(half.headers["upload-offset"])]).toEqual([200, stoppedAt]);

    const second = await tusUpload(bytes, { uploadUrl: first.url, key: KEY, chunkSize, metadata: MODEL });
    // Resumed at the stored offset: no byte before it was sent again.
    expect(second.patchOffsets[0]).toBe(stoppedAt);
    expect(second.assetId).toMatch(/^[0-9a-f-]{36}$/);
    const asset = await keyedClient(t.app, KEY).get(`/api/assets/${second.assetId}`);
    expect(asset.status).toBe(200);
    expect(asset.body).toMatchObject({
      name: "tiny.safetensors",
      asset_hash: `blake3:${blake3Hex(bytes)}`,
      size: bytes.length,
      mime_type: "application/octet-stream",
      user_metadata: { source: "test", filename: `${blake3Hex(bytes)}.safetensors` },
    });
    expect([...asset.body.tags].sort()).toEqual(["model_type:checkpoints", "models"]);
    const content = await keyedClient(t.app, KEY)
      .get(`/api/assets/${second.assetId}/content`)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => cb(null, Buffer.concat(chunks)));
      });
    expect(Buffer.compare(content.body as Buffer, bytes)).toBe(0);
    // A HEAD after completion carries the asset too; only the upload's record is left, no bytes.
    const done = await head(t, first.url);
    expect([done.status, done.headers["asset-id"], Number(done.headers["upload-offset"])]).toEqual([200, second.assetId, bytes.length]);
    expect((await readdir(uploadsDir(t))).filter((n) => !n.endsWith(".json"))).toEqual([]);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("hashes as the bytes arrive: one process taking the whole upload never reads it back; another process's PATCH makes it read back once, hash still right", async () => {
    const { t, base } = await start();
    const reads = vi.fn();
    const assemble = t.blobs.partials.assemble.bind(t.blobs.partials);
    vi.spyOn(t.blobs.partials, "assemble").mockImplementation(async (id) => {
      const assembled = await assemble(id);
      return { ...assembled, read: (range) => (reads(range ?? "whole"), assembled.read(range)) };
    });
    const bytes = randomBytes(1024 * 1024 + 7);
    const whole = await tusUpload(bytes, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      chunkSize: 300 * 1024,
      metadata: { ...MODEL, hash: `blake3:${blake3Hex(bytes)}` },
    });
    expect(whole.assetId).not.toBeNull();
    expect(reads.mock.calls.map((c) => c[0])).not.toContain("whole");

    // A second app over the same DATA_DIR is another process: it has no hasher for this upload.
    const other = randomBytes(1024 * 1024 + 9);
    const begun = await tusUpload(other, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      chunkSize: 300 * 1024,
      stopAfter: 300 * 1024,
      metadata: MODEL,
    });
    const { createApp } = await import("../src/app.ts");
    const { createTusServer } = await import("../src/compose.ts");
    const replica = createApp({ ...t.deps, tus: createTusServer(t.deps) });
    const replicaServer = replica.listen(0, "127.0.0.1");
    await new Promise((r) => replicaServer.once("listening", r));
    try {
      const replicaUrl = `http://127.0.0.1:${(replicaServer.address() as AddressInfo).port}${new URL(begun.url).pathname}`;
      const finished = await tusUpload(other, { uploadUrl: replicaUrl, key: KEY, chunkSize: 300 * 1024, metadata: MODEL });
      expect(finished.patchOffsets[0]).toBe(300 * 1024);
      expect(reads.mock.calls.map((c) => c[0])).toContain("whole");
      const asset = await keyedClient(t.app, KEY).get(`/api/assets/${finished.assetId}`);
      expect(asset.body.asset_hash).toBe(`blake3:${blake3Hex(other)}`);
    } finally {
      replicaServer.close();
    }
  });

  it("every byte landed but the process stopped before making the asset: the client's resume gets it (Asset-Id, hash right), one asset for racing HEADs", async () => {
    const { t, base } = await start();
    const bytes = randomBytes(768 * 1024 + 5);
    const begun = await tusUpload(bytes, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      chunkSize: 256 * 1024,
      stopAfter: 256 * 1024,
      metadata: MODEL,
    });
    // What a crash between the last byte and the asset leaves: the store holds every byte, no asset.
    const id = new URL(begun.url).pathname.split("/").pop()!;
    const stored = (await t.blobs.partials.get(id))!;
    const end = await t.blobs.partials.append(id, stored.offset, Readable.from([bytes.subarray(stored.offset)]), () => undefined);
    expect([end, (await t.blobs.partials.get(id))?.assetId]).toEqual([bytes.length, undefined]);

    const [a, b] = await Promise.all([head(t, begun.url), head(t, begun.url)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.headers["asset-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers["asset-id"]).toBe(a.headers["asset-id"]);
    const resumed = await tusUpload(bytes, { uploadUrl: begun.url, key: KEY, chunkSize: 256 * 1024, metadata: MODEL });
    expect([resumed.assetId, resumed.patchOffsets]).toEqual([a.headers["asset-id"], []]);
    const listed = await keyedClient(t.app, KEY).get("/api/assets");
    expect(listed.body.assets.map((x: { id: string; asset_hash: string }) => [x.id, x.asset_hash])).toEqual([
      [a.headers["asset-id"], `blake3:${blake3Hex(bytes)}`],
    ]);
  });

  it("a terminated upload is gone: 404 on HEAD, nothing left in the store", async () => {
    const { t, base } = await start();
    const bytes = randomBytes(512 * 1024);
    const begun = await tusUpload(bytes, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      chunkSize: 128 * 1024,
      stopAfter: 128 * 1024,
      metadata: MODEL,
    });
    const del = await keyedClient(t.app, KEY).delete(new URL(begun.url).pathname).set("Tus-Resumable", "1.0.0");
    expect(del.status).toBe(204);
    expect((await head(t, begun.url)).status).toBe(404);
    expect(await readdir(uploadsDir(t))).toEqual([]);
    expect(await t.blobs.list()).toEqual([]);
    expect(await t.blobs.temporaries()).toEqual([]);
    // Resuming it is refused: the client must start over.
    await expect(tusUpload(bytes, { uploadUrl: begun.url, key: KEY, metadata: MODEL })).rejects.toThrow();
  });

  it("an expired upload is swept (Upload-Expires announced at creation), finished or not", async () => {
    const { t, base } = await start({ tusExpiryMs: 60_000 });
    const create = await request(t.app)
      .post("/api/assets/uploads")
      .set({
        "X-API-Key": KEY,
        "Tus-Resumable": "1.0.0",
        "Upload-Length": "10",
        "Upload-Metadata": `filename ${b64("a.bin")},tags ${b64("input")}`,
      });
    expect(create.status).toBe(201);
    const expires = Date.parse(String(create.headers["upload-expires"]));
    expect(expires - Date.now()).toBeGreaterThan(50_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(60_000);
    const done = await tusUpload(randomBytes(10), {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      metadata: { filename: "b.bin", tags: "input" },
    });
    expect(await t.deps.tus.sweepExpired()).toBe(0);
    expect(await t.deps.tus.sweepExpired(Date.now() + 61_000)).toBe(2);
    expect((await head(t, `${base}${create.headers.location}`)).status).toBe(404);
    expect((await head(t, done.url)).status).toBe(404);
    expect(await readdir(uploadsDir(t))).toEqual([]);
    // The asset it made stays.
    expect((await keyedClient(t.app, KEY).get(`/api/assets/${done.assetId}`)).status).toBe(200);
  });

  it("another key cannot see, continue or terminate an upload (404), and its owner still can", async () => {
    const { t, base } = await start();
    const bytes = randomBytes(256 * 1024);
    const begun = await tusUpload(bytes, {
      endpoint: `${base}/api/assets/uploads`,
      key: KEY,
      chunkSize: 64 * 1024,
      stopAfter: 64 * 1024,
      metadata: MODEL,
    });
    const path = new URL(begun.url).pathname;
    const tus = { "X-API-Key": OTHER_KEY, "Tus-Resumable": "1.0.0" };
    expect((await head(t, begun.url, OTHER_KEY)).status).toBe(404);
    const patch = await request(t.app)
      .patch(path)
      .set({ ...tus, "Upload-Offset": "65536", "Content-Type": "application/offset+octet-stream" })
      .send(bytes.subarray(65536));
    expect([patch.status, patch.body.error?.code]).toEqual([404, "NOT_FOUND"]);
    expect((await request(t.app).delete(path).set(tus)).status).toBe(404);
    await expect(tusUpload(bytes, { uploadUrl: begun.url, key: OTHER_KEY, metadata: MODEL })).rejects.toThrow();
    expect(Number((await head(t, begun.url)).headers["upload-offset"])).toBe(65536);
    const done = await tusUpload(bytes, { uploadUrl: begun.url, key: KEY, metadata: MODEL });
    expect(done.assetId).not.toBeNull();
    // No key: 401, in the asset API's envelope.
    const anonymous = await request(t.app).post("/api/assets/uploads").set({ "Tus-Resumable": "1.0.0", "Upload-Length": "1" });
    expect([anonymous.status, anonymous.body.error?.code]).toEqual([401, "UNAUTHORIZED"]);
  });

  it("refuses wrong or missing metadata with a 400 tus-js-client shows, and a wrong hash at the end (HASH_MISMATCH) leaving nothing", async () => {
    const { t, base } = await start();
    const endpoint = `${base}/api/assets/uploads`;
    const bytes = randomBytes(1000);
    const cases: [Record<string, string>, string, string][] = [
      [{ tags: "input" }, "INVALID_BODY", "filename"],
      [{ filename: "a.bin" }, "INVALID_BODY", "tags"],
      [{ filename: "a.bin", tags: "models" }, "INVALID_BODY", "model_type"],
      [{ filename: "a.bin", tags: "input", user_metadata: "{not json" }, "INVALID_BODY", "user_metadata"],
      [{ filename: "a.bin", tags: "input", hash: "sha256:abc" }, "INVALID_HASH", "blake3"],
    ];
    for (const [metadata, code, mentions] of cases) {
      const err = await tusUpload(bytes, { endpoint, key: KEY, metadata }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(metadata)).not.toBeNull();
      expect(String(err)).toContain(code); // tus-js-client's message carries the body
      const { status, body } = refusal(err);
      expect(status).toBe(400);
      expect(JSON.parse(body).error.code).toBe(code);
      expect(JSON.parse(body).error.message).toContain(mentions);
    }
    const wrong = `blake3:${"0".repeat(64)}`;
    const mismatch = await tusUpload(bytes, { endpoint, key: KEY, metadata: { filename: "a.bin", tags: "input", hash: wrong } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refusal(mismatch).status).toBe(400);
    expect(JSON.parse(refusal(mismatch).body).error).toMatchObject({
      code: "HASH_MISMATCH",
      details: { expected: wrong, actual: `blake3:${blake3Hex(bytes)}` },
    });
    expect(await readdir(uploadsDir(t))).toEqual([]);
    expect(await t.blobs.list()).toEqual([]);
    expect(await t.blobs.temporaries()).toEqual([]);
    const empty = await request(t.app)
      .post("/api/assets/uploads")
      .set({
        "X-API-Key": KEY,
        "Tus-Resumable": "1.0.0",
        "Upload-Length": "0",
        "Upload-Metadata": `filename ${b64("a")},tags ${b64("input")}`,
      });
    // tus answers without a Content-Type; its clients read the body as text.
    expect([empty.status, JSON.parse(empty.text).error?.code]).toEqual([400, "EMPTY_UPLOAD"]);
  });

  it("a stalled PATCH body is cut after BODY_TIMEOUT_MS; the bytes that arrived count and the upload resumes from them", async () => {
    const { t, base } = await start({ bodyTimeoutMs: 300 });
    const bytes = randomBytes(64 * 1024);
    const create = await request(t.app)
      .post("/api/assets/uploads")
      .set({
        "X-API-Key": KEY,
        "Tus-Resumable": "1.0.0",
        "Upload-Length": String(bytes.length),
        "Upload-Metadata": `filename ${b64("s.bin")},tags ${b64("input")}`,
      });
    const url = `${base}${create.headers.location}`;
    const { request: httpRequest } = await import("node:http");
    const closed = await new Promise<boolean>((resolve) => {
      const req = httpRequest(url, {
        method: "PATCH",
        headers: {
          "X-API-Key": KEY,
          "Tus-Resumable": "1.0.0",
          "Upload-Offset": "0",
          "Content-Type": "application/offset+octet-stream",
          "Content-Length": bytes.length,
        },
      });
      req.on("error", () => resolve(true));
      req.on("response", (res) => resolve(res.statusCode !== 204));
      req.write(bytes.subarray(0, 16 * 1024));
      // and nothing more
    });
    expect(closed).toBe(true);
    const offset = Number((await head(t, url)).headers["upload-offset"]);
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(16 * 1024);
    const done = await tusUpload(bytes, { uploadUrl: url, key: KEY, metadata: {} });
    expect(done.patchOffsets[0]).toBe(offset);
    const asset = await keyedClient(t.app, KEY).get(`/api/assets/${done.assetId}`);
    expect(asset.body.asset_hash).toBe(`blake3:${blake3Hex(bytes)}`);
  });

  it("PATCH bodies count against the key's upload_mbpm: 429 once the minute's MiB are spent", async () => {
    const { base } = await start({ rateLimits: { ...NO_LIMITS, upload_mbpm: 1 } });
    const bytes = randomBytes(2 * 1024 * 1024);
    const err = await tusUpload(bytes, { endpoint: `${base}/api/assets/uploads`, key: KEY, chunkSize: 512 * 1024, metadata: MODEL }).then(
      () => null,
      (e: unknown) => e,
    );
    const { status, body } = refusal(err);
    expect(status).toBe(429);
    expect(JSON.parse(body).error.code).toBe("RATE_LIMITED");
  });

  it("works for a browser on the same origin: OPTIONS needs no key, the tus headers and Asset-Id are exposed, Location is relative, /assets/uploads too", async () => {
    const { t } = await start();
    const options = await request(t.app).options("/api/assets/uploads");
    expect(options.status).toBe(204);
    expect(options.headers["tus-version"]).toBe("1.0.0");
    expect(options.headers["tus-extension"]).toBe("creation,creation-with-upload,termination,expiration");
    const create = await request(t.app)
      .post("/assets/uploads")
      .set({
        "X-API-Key": KEY,
        "Tus-Resumable": "1.0.0",
        "Upload-Length": "3",
        "Upload-Metadata": `filename ${b64("t.txt")},tags ${b64("input")}`,
        "Content-Type": "application/offset+octet-stream",
      })
      .send(Buffer.from("abc"));
    expect(create.status).toBe(201);
    expect(create.headers.location).toMatch(/^\/assets\/uploads\/[0-9a-f]{32}$/);
    expect(create.headers["asset-id"]).toMatch(/^[0-9a-f-]{36}$/);
    const exposed = String(create.headers["access-control-expose-headers"]).split(/,\s*/);
    for (const h of ["Tus-Resumable", "Upload-Offset", "Location", "Asset-Id"]) expect(exposed).toContain(h);
    // No grant to another origin.
    expect(create.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

function b64(s: string): string {
  return Buffer.from(s).toString("base64");
}
