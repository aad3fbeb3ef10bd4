import { readFileSync } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blake3Hex, KEY, readStore, upload, view, type UploadAnswer } from "@app/testkit/assets";
import { record } from "@app/testkit/figures";
import { freePort, OwnRedis, SCRIPTS, sleep, startService, tempDir, type Service } from "@app/testkit/processes";
import { noiseImage } from "@app/testkit/png";

/**
 * Backends failing under the stack: Redis (our own redis-server, never the shared one) stopped
 * and started while masks are uploaded through the gateway with a worker process running the
 * jobs; and the S3 server (s3rver, its own process) stopped and started under uploads.
 */

function expectUnavailable(a: UploadAnswer, what: string): void {
  expect(a.status, `${what}: ${JSON.stringify(a.body)}`).toBe(503);
  expect(a.body.code, what).toBe("unavailable");
  expect(a.body.error, what).toBe("unavailable");
  expect(typeof a.body.message, what).toBe("string");
}

async function grayMask(): Promise<Buffer> {
  return sharp({ create: { width: 48, height: 48, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 80 } } })
    .toColourspace("b-w")
    .png()
    .toBuffer();
}

describe("Redis stopped and started while masks are uploaded", () => {
  let dir: string;
  let redis: OwnRedis;
  let gw: Service | undefined;
  let worker: Service | undefined;

  beforeAll(async () => {
    dir = await tempDir("redis-outage");
    await mkdir(join(dir, "redis"));
    redis = new OwnRedis(await freePort(), join(dir, "redis"));
    await redis.start();
    const env = {
      DATA_DIR: join(dir, "data"),
      REDIS_URL: redis.url,
      QUEUE_PREFIX: `rel-${process.pid}`,
      API_KEYS: KEY,
      MASK_JOB_TIMEOUT_MS: "5000",
      JOB_BACKOFF_MS: "100",
    };
    worker = await startService(SCRIPTS.worker, env);
    gw = await startService(SCRIPTS.gateway, env);
  });
  afterAll(async () => {
    await gw?.stop();
    await worker?.stop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("503 {code, message} while Redis is down; after it is back, every mask has its derivatives, none lost, none twice", async () => {
    const original = await noiseImage(48, 48, "png");
    const up = await upload(gw!.url, original);
    expect(up.status).toBe(200);
    const originalName = up.body.name as string;
    const masks = await Promise.all(Array.from({ length: 30 }, grayMask));
    const answers = new Map<number, UploadAnswer>();
    const maskUpload = (i: number) =>
      upload(gw!.url, masks[i]!, {
        path: "/api/upload/mask",
        fields: {
          original_ref: JSON.stringify({ filename: originalName, subfolder: "", type: "input" }),
          type: "input",
          subfolder: "clipspace",
        },
      });

    for (let i = 0; i < 10; i++) {
      const a = await maskUpload(i);
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      answers.set(i, a);
    }

    await redis.stop();
    const t0 = performance.now();
    for (let i = 10; i < 20; i++) expectUnavailable(await maskUpload(i), `mask ${i} while Redis is down`);
    const downSeconds = (performance.now() - t0) / 10 / 1000;
    // Image uploads do not need Redis and go on working.
    expect((await upload(gw!.url, await noiseImage(8, 8))).status).toBe(200);

    await redis.start();
    // The producer reconnects by itself: retry the first refused mask until it goes through (bounded).
    let recovered: UploadAnswer | undefined;
    for (let n = 0; n < 60 && recovered?.status !== 200; n++) {
      recovered = await maskUpload(10);
      if (recovered.status !== 200) {
        expectUnavailable(recovered, "mask 10 while Redis comes back");
        await sleep(500);
      }
    }
    expect(recovered!.status).toBe(200);
    answers.set(10, recovered!);
    for (let i = 11; i < 30; i++) {
      const a = await maskUpload(i);
      expect(a.status, `mask ${i}: ${JSON.stringify(a.body)}`).toBe(200);
      answers.set(i, a);
    }
    // A retry of a mask done before the outage gives the same answer (the job is idempotent).
    const again = await maskUpload(3);
    expect(again.body).toEqual(answers.get(3)!.body);

    // Audit the store: exactly the derivatives the answers name, each readable and tagged with its mask.
    const named = new Set<string>();
    for (const [i, a] of answers) {
      const meta = a.body.metadata as { related_files: { mask: string; paint: string; painted: string }; original_hash: string };
      expect(meta.related_files.mask).toBe(`${blake3Hex(masks[i]!)}.png`);
      expect(meta.original_hash).toBe(`blake3:${originalName.split(".")[0]}`);
      for (const name of [meta.related_files.paint, meta.related_files.painted]) {
        named.add(name.split(".")[0]!);
        const r = await view(gw!.url, name);
        expect(r.status).toBe(200);
        const m = await sharp(r.bytes).metadata();
        expect([m.width, m.height]).toEqual([48, 48]);
      }
    }
    expect(named.size).toBe(60);
    const store = await readStore(join(dir, "data"));
    const derived = [...store.records.entries()].filter(([, path]) =>
      (JSON.parse(readFileSync(path, "utf8")) as { tags: string[] }).tags.includes("derived"),
    );
    expect(new Set(derived.map(([h]) => h))).toEqual(named);
    for (const [hash, path] of derived) {
      const tags = (JSON.parse(readFileSync(path, "utf8")) as { tags: string[] }).tags;
      expect(
        tags.filter((t) => t.startsWith("mask:")),
        hash,
      ).toHaveLength(1);
    }
    expect(store.temporaries).toEqual([]);
    record("redis-outage", {
      masksBefore: 10,
      refusedWhileDown: 10,
      masksAfter: 20,
      secondsPer503: +downSeconds.toFixed(2),
      derivatives: named.size,
    });
  });
});

describe("the S3 server stopped and started under uploads", () => {
  let dir: string;
  let s3Port: number;
  let s3: Service | undefined;
  let gw: Service | undefined;
  const startS3 = () =>
    startService("packages/testkit/src/s3rver-main.ts", { DIRECTORY: join(dir, "s3") }, { port: s3Port, readyPath: "/healthz" });

  beforeAll(async () => {
    dir = await tempDir("s3-outage");
    await mkdir(join(dir, "s3"));
    s3Port = await freePort();
    s3 = await startS3();
    gw = await startService(SCRIPTS.gateway, {
      DATA_DIR: join(dir, "data"),
      API_KEYS: KEY,
      S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
      S3_ACCESS_KEY: "S3RVER",
      S3_SECRET_KEY: "S3RVER",
      S3_BUCKET: "reliability",
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("503 {code, message} while S3 is down, then normal, with everything stored before still there", async () => {
    const before = await Promise.all(Array.from({ length: 10 }, () => noiseImage(40, 40)));
    for (const img of before) {
      const a = await upload(gw!.url, img);
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body.name).toBe(`${blake3Hex(img)}.png`);
    }

    await s3!.kill("SIGKILL");
    const during = await Promise.all(Array.from({ length: 5 }, () => noiseImage(40, 40)));
    for (const img of during) expectUnavailable(await upload(gw!.url, img), "upload while S3 is down");
    const read = await fetch(`${gw!.url}/api/view?filename=${blake3Hex(before[0]!)}.png`, { headers: { "X-API-Key": KEY } });
    expect(read.status).toBe(503);
    const readBody = (await read.json()) as Record<string, unknown>;
    expect(readBody.code).toBe("unavailable");
    expect((await fetch(`${gw!.url}/readyz`)).status).toBe(503);

    s3 = await startS3();
    let first: UploadAnswer | undefined;
    for (let n = 0; n < 40 && first?.status !== 200; n++) {
      first = await upload(gw!.url, during[0]!);
      if (first.status !== 200) {
        expectUnavailable(first, "upload while S3 comes back");
        await sleep(250);
      }
    }
    expect(first!.status).toBe(200);
    for (const img of during.slice(1)) expect((await upload(gw!.url, img)).status).toBe(200);
    for (const img of [...before, ...during]) {
      const r = await view(gw!.url, `${blake3Hex(img)}.png`);
      expect(r.status).toBe(200);
      expect(r.bytes.equals(img)).toBe(true);
    }
    expect((await fetch(`${gw!.url}/readyz`)).status).toBe(200);

    // The bucket as s3rver keeps it on disk: no temporary left, every object under blobs/ re-hashes to its key.
    const files = (await readdir(join(dir, "s3", "reliability"), { recursive: true })).map(String);
    expect(files.filter((f) => f.startsWith("tmp/") && f.endsWith("._S3rver_object"))).toEqual([]);
    const blobs = files.filter((f) => /^blobs\/[0-9a-f]{64}\._S3rver_object$/.test(f));
    expect(blobs.length).toBe(before.length + during.length);
    for (const f of blobs) expect(blake3Hex(readFileSync(join(dir, "s3", "reliability", f))), f).toBe(f.slice(6, 70));
    record("s3-outage", { storedBefore: before.length, refusedWhileDown: during.length, storedAfter: during.length });
  });
});
