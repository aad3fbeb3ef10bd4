import { mkdtemp, readdir, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { blake3Hex, KEY, view } from "@app/testkit/assets";
import { SCRIPTS, sleep, startService, type Service } from "@app/testkit/processes";
import { multipart } from "@app/testkit/raw-http";
import { startS3, type RunningS3 } from "@app/testkit/s3rver";
import { S3BlobStore } from "@app/blobs/s3";
import { noiseImage } from "@app/testkit/png";

// It starts and restarts service processes (a few seconds each on a loaded 2-core machine): a cap, not a timing.
const PROCESS_TEST_TIMEOUT_MS = 180_000;

/**
 * Two upload processes on one store, as replicas run (upload HPA minReplicas 2 on one bucket, or
 * two processes on one DATA_DIR). Process A is mid-upload, its image staged as a temporary,
 * when process B restarts and runs its start-up sweep. A's upload must still succeed and read
 * back, through either process.
 */
let s3: RunningS3;
let dir: string;
const running: Service[] = [];

beforeAll(async () => {
  s3 = await startS3();
  dir = await mkdtemp(join(tmpdir(), "replicas-"));
});
afterEach(async () => {
  for (const svc of running.splice(0)) await svc.stop();
});
afterAll(async () => {
  await s3?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<Service> {
  const svc = await startService(SCRIPTS.upload, { API_KEYS: KEY, ...env });
  running.push(svc);
  return svc;
}

async function restart(svc: Service, env: Record<string, string>): Promise<Service> {
  await svc.stop();
  running.splice(running.indexOf(svc), 1);
  return start(env);
}

/**
 * An upload whose image part has arrived whole (the server has staged it) while the body is held
 * open before its last bytes; `finish()` sends them and returns the answer.
 */
function heldUpload(base: string, image: Buffer): { finish(): Promise<{ status: number; body: Record<string, unknown> }> } {
  const { body, contentType } = multipart([
    { name: "image", filename: "a.png", contentType: "image/png", body: image },
    { name: "subfolder", body: "replica" },
  ]);
  // Up to the middle of the field after the image: the image part's end has been seen.
  const cut = body.indexOf("replica", body.length - 64) + 3;
  const url = new URL(base);
  const req = request({
    host: url.hostname,
    port: url.port,
    method: "POST",
    path: "/api/upload/image",
    headers: { "Content-Type": contentType, "Content-Length": body.length, "X-API-Key": KEY },
  });
  const answer = new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (s: string) => (text += s));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on("error", reject);
  });
  req.write(body.subarray(0, cut));
  return {
    finish() {
      req.end(body.subarray(cut));
      return answer;
    },
  };
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function replicaRestartsMidUpload(env: Record<string, string>, temporaries: () => Promise<string[]>): Promise<void> {
  const a = await start(env);
  let b = await start(env);
  const image = await noiseImage(300, 200);
  const held = heldUpload(a.url, image);
  await until("A's staged temporary", async () => (await temporaries()).length === 1);

  b = await restart(b, env); // its start-up sweep runs before it answers /readyz
  const answer = await held.finish();
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(b.output.join("\n")).not.toContain("removed temporaries");
  expect(answer.body.name).toBe(`${blake3Hex(image)}.png`);
  for (const svc of [a, b]) {
    const back = await view(svc.url, answer.body.name as string);
    expect(back.status).toBe(200);
    expect(back.bytes.equals(image)).toBe(true);
  }
  expect(await temporaries()).toEqual([]);
}

describe("two upload processes on one store, one restarting mid-upload of the other", () => {
  it(
    "S3 (one s3rver bucket): nothing lost",
    async () => {
      const bucket = "replicas";
      const env = {
        S3_ENDPOINT: s3.endpoint,
        S3_ACCESS_KEY: s3.accessKey,
        S3_SECRET_KEY: s3.secretKey,
        S3_BUCKET: bucket,
        DATA_DIR: join(dir, "s3-local"),
      };
      const inspector = new S3BlobStore({
        endPoint: "127.0.0.1",
        port: s3.port,
        useSSL: false,
        accessKey: s3.accessKey,
        secretKey: s3.secretKey,
        region: "us-east-1",
        bucket,
      });
      await replicaRestartsMidUpload(env, () => inspector.temporaries());
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "filesystem (one shared DATA_DIR): nothing lost",
    async () => {
      const dataDir = join(dir, "shared");
      await replicaRestartsMidUpload({ DATA_DIR: dataDir }, () => readdir(join(dataDir, "blobs", "tmp")).catch(() => []));
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
