import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { BullMqJobQueue } from "@app/jobs";
import { jobIds } from "@app/contracts";
import { blake3Hex, expectUploadError, KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { corruptBodyPng, noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";
import { TEST_REDIS_URL } from "@app/testkit/redis";

/** The mask job through BullMQ on the real Redis (the test process is producer and worker). */
const REDIS_URL = TEST_REDIS_URL;
let t: TestApp | undefined;
let prefix = "";
afterEach(async () => {
  await t?.close();
  t = undefined;
  // Leave nothing behind in the shared Redis.
  const port = new URL(REDIS_URL).port || "6379";
  const keys = execFileSync("redis-cli", ["-p", port, "--scan", "--pattern", `${prefix}*`])
    .toString()
    .split("\n")
    .filter(Boolean);
  if (keys.length > 0) execFileSync("redis-cli", ["-p", port, "del", ...keys]);
});

describe("mask upload with the BullMQ queue", () => {
  it("derives through a BullMQ job and answers the retry with the same result", async () => {
    prefix = `upload-test-${randomUUID()}`;
    t = await makeTestApp({ queue: new BullMqJobQueue({ redisUrl: REDIS_URL, prefix }) });
    const up = await keyedClient(t.app, KEY)
      .post("/api/upload/image")
      .attach("image", await noisePng(32, 32), { filename: "o.png" });
    const mask = await noisePng(32, 32);
    const first = await keyedClient(t.app, KEY)
      .post("/api/upload/mask")
      .attach("image", mask, { filename: "m.png" })
      .field("original_ref", up.body.name);
    expect(first.status).toBe(200);
    expect(first.body.metadata.mask_type).toBe("luminance");
    const again = await keyedClient(t.app, KEY)
      .post("/upload/mask")
      .attach("image", mask, { filename: "m.png" })
      .field("original_ref", up.body.name);
    expect(again.body).toEqual(first.body);
    expect(await t.blobs.list()).toHaveLength(4);
  });

  it("an original that does not decode: 400 invalid_image, the job tried once (UnrecoverableError) and its code read back from Redis", async () => {
    prefix = `upload-test-${randomUUID()}`;
    const queue = new BullMqJobQueue({ redisUrl: REDIS_URL, prefix, attempts: 3, backoffMs: 1000 });
    t = await makeTestApp({ queue });
    const bad = await corruptBodyPng(64, 64);
    const up = await keyedClient(t.app, KEY).post("/api/upload/image").attach("image", bad, { filename: "o.png" });
    expect(up.status).toBe(200);
    const mask = await noisePng(8, 8);
    const res = await keyedClient(t.app, KEY)
      .post("/api/upload/mask")
      .attach("image", mask, { filename: "m.png" })
      .field("original_ref", up.body.name);
    expect(res.status).toBe(400);
    expectUploadError(res.body, "invalid_image");
    const jobId = jobIds.maskDerive({ originalHash: blake3Hex(bad), maskHash: blake3Hex(mask) });
    expect(await queue.inspect(jobId)).toMatchObject({ state: "failed", attemptsMade: 1, failureCode: "invalid_image" });
  });

  it("answers 503 unavailable at once when Redis does not answer, keeping what was stored", async () => {
    prefix = `upload-test-${randomUUID()}`;
    t = await makeTestApp({ queue: new BullMqJobQueue({ redisUrl: "redis://127.0.0.1:1", prefix, unavailableAfterMs: 500 }) });
    const up = await keyedClient(t.app, KEY)
      .post("/api/upload/image")
      .attach("image", await noisePng(8, 8), { filename: "o.png" });
    const res = await keyedClient(t.app, KEY)
      .post("/api/upload/mask")
      .attach("image", await noisePng(8, 8), { filename: "m.png" })
      .field("original_ref", up.body.name);
    expect(res.status).toBe(503);
    expectUploadError(res.body, "unavailable");
    expect(await t.blobs.list()).toHaveLength(2);
  });
});
