import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digestKey } from "@app/upload/internal";
import { tinyPng } from "@app/testkit/png";
import { SCRIPTS, startService, type Service } from "@app/testkit/processes";
import { countKeys, deleteKeys, TEST_REDIS_URL, uniquePrefix } from "@app/testkit/redis";

/**
 * Two gateway processes (embedded upload service) on one Redis and one key prefix, as two
 * replicas behind a load balancer: a key's limits hold across both, not per process.
 */
const KEY = "rl-redis-key-5bT8wQ2mZ7xC4vN1";
const OTHER_KEY = "rl-redis-other-key-9kL3pR6sD0fG";
const FILE_KEY = "rl-redis-file-key-2hJ5nM8qW1eR";
const prefix = uniquePrefix("ratelimit-gw");
let dir: string;
let a: Service;
let b: Service;
let n = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rl-redis-"));
  const keyFile = join(dir, "keys.txt");
  await writeFile(keyFile, `sha256:${digestKey(FILE_KEY).toString("hex")} partner upload_rpm=2\n`);
  const env = (name: string) => ({
    DATA_DIR: join(dir, name),
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    API_KEYS: `${KEY},${OTHER_KEY}`,
    API_KEYS_FILE: keyFile,
    RATE_LIMIT_UPLOAD_RPM: "4",
    RATE_LIMIT_ASSETS_RPM: "3",
  });
  [a, b] = await Promise.all([startService(SCRIPTS.gateway, env("a")), startService(SCRIPTS.gateway, env("b"))]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await deleteKeys([prefix]);
  await rm(dir, { recursive: true, force: true });
});

async function upload(gw: Service, key: string): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const form = new FormData();
  form.set("image", new Blob([new Uint8Array(tinyPng(++n))], { type: "image/png" }), "a.png");
  const res = await fetch(`${gw.url}/api/upload/image`, { method: "POST", headers: { "X-API-Key": key }, body: form });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, unknown> };
}

async function view(gw: Service, key: string): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${gw.url}/view?filename=${"e".repeat(64)}.png`, { headers: { Authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return { status: res.status, retryAfter: res.headers.get("retry-after") };
}

function expect429(res: { status: number; retryAfter: string | null; body?: Record<string, unknown> }): void {
  expect(res.status).toBe(429);
  expect(res.retryAfter).toMatch(/^\d+$/);
  expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(res.retryAfter)).toBeLessThanOrEqual(60);
  if (res.body) expect(res.body).toMatchObject({ code: "rate_limited", error: "rate_limited", message: expect.any(String) });
}

describe("per-key limits across two gateway processes sharing Redis", () => {
  it("RATE_LIMIT_UPLOAD_RPM=4 allows four uploads in all, whichever process takes them; other keys go on", async () => {
    for (const gw of [a, b, a, b]) expect((await upload(gw, KEY)).status).toBe(200);
    expect429(await upload(a, KEY));
    expect429(await upload(b, KEY));
    expect((await upload(b, OTHER_KEY)).status).toBe(200);
    expect((await upload(a, "not-a-key")).status).toBe(401); // the key is checked before it is counted
  });

  it("a key-file limit (upload_rpm=2) holds across both too", async () => {
    expect((await upload(b, FILE_KEY)).status).toBe(200);
    expect((await upload(a, FILE_KEY)).status).toBe(200);
    expect429(await upload(b, FILE_KEY));
  });

  it("RATE_LIMIT_ASSETS_RPM=3 counts /view across both, apart from uploads", async () => {
    for (const gw of [a, b, a]) expect((await view(gw, OTHER_KEY)).status).toBe(404);
    expect429(await view(b, OTHER_KEY));
    expect(await countKeys(`${prefix}:rl`)).toBeGreaterThanOrEqual(3); // the counts live in Redis, under the shared prefix
  });
});
