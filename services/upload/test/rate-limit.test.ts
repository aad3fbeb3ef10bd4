import { once } from "node:events";
import { connect } from "node:net";
import type { Server } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "@app/testkit/processes";
import { rawRequest } from "@app/testkit/raw-http";
import { digestKey } from "../src/adapters/keys/api-keys.ts";
import { NO_LIMITS, type RateLimits } from "../src/domain/key-limits.ts";
import { expectUploadError, KEY, makeTestApp, multipart, OTHER_KEY, type TestApp } from "./helpers.ts";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

const STRICT_KEY = "file-key-strict-0123456789";
const FREE_KEY = "file-key-free-0123456789ab";
const KiB = 1024;

let t: TestApp;
let dir: string;
afterEach(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

/** A test app whose RATE_LIMIT_* defaults are `defaults`, with two file keys that name their own limits. */
async function appWith(defaults: Partial<RateLimits>): Promise<TestApp> {
  dir = await mkdtemp(join(tmpdir(), "ratelimit-"));
  const keyFile = join(dir, "api-keys.txt");
  await writeFile(
    keyFile,
    [
      `sha256:${digestKey(STRICT_KEY).toString("hex")} strict client upload_rpm=1 assets_rpm=1`,
      `sha256:${digestKey(FREE_KEY).toString("hex")} trusted batch job upload_rpm=0 upload_mbpm=0 assets_rpm=0`,
      "",
    ].join("\n"),
  );
  t = await makeTestApp({ keyFile, settings: { rateLimits: { ...NO_LIMITS, ...defaults } } });
  return t;
}

/** Poll until `check` holds; fails after a deadline well inside the 60 s window. Asserts no duration. */
async function eventually(check: () => Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`condition not met within ${deadlineMs} ms`);
    await sleep(50);
  }
}

const upload = async (key: string, bytes?: Buffer) =>
  keyedClient(t.app, key)
    .post("/api/upload/image")
    .attach("image", bytes ?? (await noisePng(4, 4)), { filename: "a.png" });

/** 429 with Retry-After; the asset routes say it in ComfyUI's envelope (`asset: true`), the others as `{code, message, error}`. */
function expectRateLimited(
  res: { status: number; body: unknown; headers: Record<string, string> },
  limitName: string,
  asset = false,
): void {
  expect(res.status).toBe(429);
  if (asset) expect(res.body).toMatchObject({ error: { code: "RATE_LIMITED", details: {} } });
  else expectUploadError(res.body, "rate_limited");
  const message = asset ? (res.body as { error: { message: string } }).error.message : (res.body as { message: string }).message;
  expect(message).toContain(limitName);
  expect(res.headers["retry-after"]).toMatch(/^\d+$/);
  const seconds = Number(res.headers["retry-after"]);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
}

describe("per-key rate limits (in memory)", () => {
  it("upload_rpm: the request over the limit gets 429 {code, message, error} with Retry-After; other keys go on", async () => {
    await appWith({ upload_rpm: 3 });
    for (let i = 0; i < 3; i++) expect((await upload(KEY)).status).toBe(200);
    const over = await upload(KEY);
    expectRateLimited(over, "upload_rpm");
    expectRateLimited(await keyedClient(t.app, KEY).post("/upload/mask"), "upload_rpm"); // both upload routes, both prefixes
    expect((await upload(OTHER_KEY)).status).toBe(200);
    const view = await keyedClient(t.app, KEY).get(`/api/view?filename=${"a".repeat(64)}.png`);
    expect(view.status).toBe(404); // reads are another class: still served
    expect((await keyedClient(t.app, "unknown").post("/api/upload/image")).status).toBe(401);
  });

  it("a limit in the key file overrides the default, both ways (0 = no limit)", async () => {
    await appWith({ upload_rpm: 3, assets_rpm: 3 });
    expect((await upload(STRICT_KEY)).status).toBe(200);
    expectRateLimited(await upload(STRICT_KEY), "upload_rpm");
    for (let i = 0; i < 6; i++) expect((await upload(FREE_KEY)).status).toBe(200);
    const view = (key: string) => keyedClient(t.app, key).get(`/view?filename=${"b".repeat(64)}.png`);
    expect((await view(STRICT_KEY)).status).toBe(404);
    expectRateLimited(await view(STRICT_KEY), "assets_rpm");
    for (let i = 0; i < 6; i++) expect((await view(FREE_KEY)).status).toBe(404);
  });

  it("assets_rpm counts the routes without an upload body; uploads do not spend it", async () => {
    await appWith({ assets_rpm: 2 });
    for (let i = 0; i < 3; i++) expect((await upload(KEY)).status).toBe(200);
    const view = () =>
      request(t.app)
        .get(`/api/view?filename=${"c".repeat(64)}.png`)
        .set("Authorization", `Bearer ${KEY}`);
    expect((await view()).status).toBe(404);
    expect((await view()).status).toBe(404);
    expectRateLimited(await view(), "assets_rpm");
  });

  it("assets_rpm covers the asset API: HEAD by hash, lists, records and tags share the key's minute", async () => {
    await appWith({ assets_rpm: 4 });
    const name = (await upload(KEY)).body.name as string;
    const hash = `blake3:${name.split(".")[0]}`;
    expect((await keyedClient(t.app, KEY).head(`/api/assets/hash/${hash}`)).status).toBe(200);
    expect((await keyedClient(t.app, KEY).get("/api/assets?limit=5")).status).toBe(200);
    expect((await keyedClient(t.app, KEY).get("/api/tags")).status).toBe(200);
    expect((await keyedClient(t.app, KEY).get(`/view?filename=${name}`)).status).toBe(200);
    const head = await keyedClient(t.app, KEY).head(`/assets/hash/${hash}`);
    expect(head.status).toBe(429);
    expect(head.headers["retry-after"]).toMatch(/^\d+$/);
    expectRateLimited(await keyedClient(t.app, KEY).get("/api/assets"), "assets_rpm", true);
    expectRateLimited(await keyedClient(t.app, KEY).post("/api/assets/from-hash").send({ hash }), "assets_rpm", true);
    expect((await keyedClient(t.app, OTHER_KEY).get("/api/assets")).status).toBe(200);
  });

  it("upload_mbpm: a body is charged its Content-Length before it is read; a refused body spends nothing; a body over the whole allowance is 413", async () => {
    await appWith({ upload_mbpm: 1 });
    const big = await noisePng(400, 400); // ~470 KiB of incompressible pixels
    expect(big.length).toBeGreaterThan(400 * KiB);
    expect(big.length).toBeLessThan(512 * KiB);
    expect((await upload(KEY, big)).status).toBe(200);
    expect((await upload(KEY, await noisePng(400, 400))).status).toBe(200);
    // About 940 KiB of the minute's 1 MiB are spent: another large body is refused before it is stored.
    const refused = await upload(KEY, await noisePng(400, 400));
    expectRateLimited(refused, "upload_mbpm");
    expect(await t.blobs.temporaries()).toEqual([]);
    // The refused body was not counted: a small one still fits.
    expect((await upload(KEY, await noisePng(16, 16))).status).toBe(200);
    expect((await upload(OTHER_KEY, await noisePng(400, 400))).status).toBe(200);

    const whole = await upload(OTHER_KEY, await noisePng(700, 700)); // > 1 MiB on its own: waiting cannot help
    expect(whole.status).toBe(413);
    expectUploadError(whole.body, "payload_too_large");
    expect(whole.body.message).toContain("upload_mbpm");
  });

  it("upload_mbpm: a body the client abandons is charged only for what arrived", async () => {
    await appWith({ upload_mbpm: 1 });
    const server: Server = t.app.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as { port: number }).port;
    try {
      // Declares 900 KiB, sends 10 KiB of it, and goes away.
      const socket = connect(port, "127.0.0.1");
      await once(socket, "connect");
      const head = `POST /api/upload/image HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${900 * KiB}\r\n\r\n`;
      socket.write(head + "--B\r\n" + "x".repeat(10 * KiB));
      const body = await noisePng(400, 400);
      // 900 KiB + 470 KiB is over the minute's 1 MiB (a refused body is given back, so asking costs nothing)...
      await eventually(async () => (await upload(KEY, body)).status === 429);
      socket.destroy();
      // ...and once the abandoned body is settled to what arrived, 10 KiB + 470 KiB is not.
      await eventually(async () => (await upload(KEY, body)).status === 200);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });

  it("upload_mbpm: a body without Content-Length is charged as it streams, and only for what arrived", async () => {
    await appWith({ upload_mbpm: 1 });
    const server: Server = t.app.listen(0, "127.0.0.1");
    await once(server, "listening");
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const chunked = async (image: Buffer) => {
        const { body, contentType } = multipart([{ name: "image", filename: "a.png", contentType: "image/png", body: image }]);
        const chunks = Array.from({ length: Math.ceil(body.length / (64 * KiB)) }, (_, i) =>
          body.subarray(i * 64 * KiB, (i + 1) * 64 * KiB),
        );
        return rawRequest(base, {
          method: "POST",
          path: "/api/upload/image",
          headers: { "X-API-Key": KEY, "Content-Type": contentType },
          body: chunks,
        });
      };
      const first = await chunked(await noisePng(400, 400));
      expect(first.status, first.text).toBe(200);
      // Charged a step ahead while streaming, then settled to what arrived: a body with Content-Length still fits.
      expect((await upload(KEY, await noisePng(400, 400))).status).toBe(200);
      const over = await chunked(await noisePng(400, 400));
      expect(over.status).toBe(429);
      expectUploadError(over.json, "rate_limited");
      expect(over.headers["retry-after"]).toMatch(/^\d+$/);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
});
