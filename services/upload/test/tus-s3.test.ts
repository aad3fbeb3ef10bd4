import { randomBytes, randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "minio";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3BlobStore } from "@app/blobs/s3";
import { createSqliteReferenceStore } from "../src/adapters/references/sqlite-reference-store.ts";
import { blake3Hex, KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { tusUpload } from "@app/testkit/tus-client";
import { startS3, type RunningS3 } from "@app/testkit/s3rver";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * tus over the S3 store: two service instances share one bucket (and one asset database), as
 * replicas behind a load balancer do. One takes the first PATCHes, the other the rest: the
 * parts and the tail short of a part are in the bucket, so the second resumes at the stored
 * offset, re-reads the assembled upload once to hash it, and makes the asset.
 */
const PART = 5 * 1024 * 1024;
let s3: RunningS3;
let bucket: string;
let dbDir: string;
const apps: { t: TestApp; server: Server; base: string }[] = [];

beforeAll(async () => {
  s3 = await startS3();
  bucket = `tus-${randomUUID().slice(0, 8)}`;
  dbDir = await mkdtemp(join(tmpdir(), "tus-s3-db-"));
  const refs = createSqliteReferenceStore(join(dbDir, "assets.sqlite"));
  for (let i = 0; i < 2; i++) {
    const store = new S3BlobStore({
      endPoint: "127.0.0.1",
      port: s3.port,
      useSSL: false,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      region: "us-east-1",
      bucket,
      partSize: PART,
    });
    const t = await makeTestApp({ blobs: store, references: refs });
    const server = t.app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    apps.push({ t, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  }
});
afterAll(async () => {
  for (const a of apps) {
    a.server.closeAllConnections();
    a.server.close();
  }
  // The second instance shares the first's reference store: only its own queue and DATA_DIR are its to close.
  if (apps[1]) {
    await apps[1].t.deps.queue.close();
    await rm(apps[1].t.dataDir, { recursive: true, force: true });
  }
  await apps[0]?.t.close();
  await s3?.stop();
  await rm(dbDir, { recursive: true, force: true });
});

async function uploadObjects(): Promise<string[]> {
  const client = new Client({
    endPoint: "127.0.0.1",
    port: s3.port,
    useSSL: false,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    pathStyle: true,
  });
  const names: string[] = [];
  for await (const o of client.listObjectsV2(bucket, "uploads/", true)) names.push((o as { name: string }).name);
  return names;
}

describe("tus over the S3 store, two instances sharing the bucket", () => {
  it("one instance takes the first PATCHes, the other the rest; the asset is made with its hash right", async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    const bytes = randomBytes(2 * PART + 1234);
    const chunkSize = 3 * 1024 * 1024; // not a multiple of the part: tails wait in the bucket between PATCHes
    const begun = await tusUpload(bytes, {
      endpoint: `${a.base}/api/assets/uploads`,
      key: KEY,
      chunkSize,
      stopAfter: 2 * chunkSize,
      metadata: { filename: "m.safetensors", tags: "models,model_type:loras" },
    });
    const path = new URL(begun.url).pathname;
    const onB = await request(b.t.app).head(path).set({ "X-API-Key": KEY, "Tus-Resumable": "1.0.0" });
    expect(Number(onB.headers["upload-offset"])).toBe(2 * chunkSize);
    const done = await tusUpload(bytes, { uploadUrl: `${b.base}${path}`, key: KEY, chunkSize, metadata: {} });
    expect(done.patchOffsets[0]).toBe(2 * chunkSize);
    expect(done.assetId).not.toBeNull();
    const asset = await keyedClient(a.t.app, KEY).get(`/api/assets/${done.assetId}`);
    expect(asset.body).toMatchObject({ asset_hash: `blake3:${blake3Hex(bytes)}`, size: bytes.length, name: "m.safetensors" });
    const content = await keyedClient(a.t.app, KEY)
      .get(`/api/assets/${done.assetId}/content`)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => cb(null, Buffer.concat(chunks)));
      });
    expect(Buffer.compare(content.body as Buffer, bytes)).toBe(0);
    // Either instance answers a HEAD with the asset; only the upload's record is left in the bucket.
    const after = await request(a.t.app).head(path).set({ "X-API-Key": KEY, "Tus-Resumable": "1.0.0" });
    expect(after.headers["asset-id"]).toBe(done.assetId);
    expect(await uploadObjects()).toEqual([`uploads/${path.split("/").pop()}.json`]);
    expect(await a.t.blobs.temporaries()).toEqual([]);
  });

  it("a terminated upload leaves nothing in the bucket (its multipart upload aborted)", async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    const before = await uploadObjects();
    const bytes = randomBytes(PART + 100);
    const begun = await tusUpload(bytes, {
      endpoint: `${a.base}/api/assets/uploads`,
      key: KEY,
      chunkSize: PART + 50,
      stopAfter: 1,
      metadata: { filename: "x.bin", tags: "input" },
    });
    const path = new URL(begun.url).pathname;
    const del = await request(b.t.app).delete(path).set({ "X-API-Key": KEY, "Tus-Resumable": "1.0.0" });
    expect(del.status).toBe(204);
    expect((await request(a.t.app).head(path).set({ "X-API-Key": KEY, "Tus-Resumable": "1.0.0" })).status).toBe(404);
    expect(await uploadObjects()).toEqual(before);
  });
});
