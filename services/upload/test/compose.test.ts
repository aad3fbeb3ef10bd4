import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "@app/platform";
import { createApp } from "../src/app.ts";
import { createRateLimiter, createUploadRuntime, type UploadRuntime } from "../src/compose.ts";
import { countKeys, deleteKeys, TEST_REDIS_URL, uniquePrefix } from "@app/testkit/redis";
import { createBlobStore, temporaryName } from "@app/blobs";
import { blake3Hex } from "./helpers.ts";
import { startS3 } from "@app/testkit/s3rver";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

const silent = pino({ level: "silent" });
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe("createUploadRuntime", () => {
  it("composes the filesystem store from config, sweeps crash temporaries at start, and serves", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "compose-"));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    await mkdir(join(dataDir, "blobs", "tmp"), { recursive: true });
    const crashed = spawnSync(process.execPath, ["-e", ""]).pid; // a process that is gone
    await writeFile(join(dataDir, "blobs", "tmp", temporaryName(crashed)), "partial");
    const deps: UploadRuntime = await createUploadRuntime(loadConfig({ DATA_DIR: dataDir, API_KEYS: "k1,k2" }), silent);
    cleanup.push(() => deps.close());
    expect(deps.blobs.kind).toBe("fs");
    expect(deps.queue.kind).toBe("in-process");
    expect(await readdir(join(dataDir, "blobs", "tmp"))).toEqual([]);
    expect(await deps.isReady()).toBe(true);
    const app = createApp(deps);
    expect((await request(app).get("/readyz")).status).toBe(200);
    const png = await noisePng(6, 6);
    const res = await request(app).post("/upload/image").set("Authorization", "Bearer k2").attach("image", png, { filename: "a.png" });
    expect(res.body.name).toBe(`${blake3Hex(png)}.png`);
    const mask = await keyedClient(app, "k1")
      .post("/upload/mask")
      .attach("image", await noisePng(6, 6), { filename: "m.png" })
      .field("original_ref", res.body.name);
    expect(mask.status).toBe(200); // the in-process queue runs this service's own mask handler
    const metrics = await request(app).get("/metrics");
    expect(metrics.text).toMatch(/upload_objects_created_total/);
  });

  it("reads keys from DATA_DIR/api-keys.txt by default", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "compose-"));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const { createApiKey } = await import("../src/adapters/keys/api-keys.ts");
    const key = await createApiKey(join(dataDir, "api-keys.txt"), "default file");
    const deps = await createUploadRuntime(loadConfig({ DATA_DIR: dataDir }), silent);
    cleanup.push(() => deps.close());
    expect(deps.keys.verify(key)?.label).toBe("default file");
  });

  it("counts rate limits in memory, or in Redis when REDIS_URL is set", async () => {
    const memory = await createRateLimiter(loadConfig({ DATA_DIR: tmpdir() }), silent);
    cleanup.push(() => memory.close());
    expect(memory.kind).toBe("memory");
    const prefix = uniquePrefix("compose-rl");
    cleanup.push(() => deleteKeys([prefix]));
    const redis = await createRateLimiter(loadConfig({ DATA_DIR: tmpdir(), REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix }), silent);
    cleanup.push(() => redis.close());
    expect(redis.kind).toBe("redis");
    await redis.consume("upload_rpm", "k", 5, 1);
    expect(await countKeys(`${prefix}:rl`)).toBe(1);
  });

  it("composes the S3 store when S3_ENDPOINT is set", async () => {
    const s3 = await startS3();
    cleanup.push(() => s3.stop());
    const dataDir = await mkdtemp(join(tmpdir(), "compose-s3-"));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const config = loadConfig({
      DATA_DIR: dataDir,
      API_KEYS: "k",
      S3_ENDPOINT: s3.endpoint,
      S3_ACCESS_KEY: s3.accessKey,
      S3_SECRET_KEY: s3.secretKey,
      S3_BUCKET: "composed",
    });
    const deps = await createUploadRuntime(config, silent);
    cleanup.push(() => deps.close());
    expect(deps.blobs.kind).toBe("s3");
    expect(await deps.isReady()).toBe(true);
    const png = await noisePng(5, 5);
    const res = await keyedClient(createApp(deps), "k").post("/api/upload/image").attach("image", png, { filename: "a.png" });
    expect(res.status).toBe(200);
    expect(await (await createBlobStore(config)).list()).toEqual([blake3Hex(png)]); // a second store on the bucket sees it
  });
});
