import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyPng } from "@app/testkit/png";
import { startService, SCRIPTS, type Service } from "@app/testkit/processes";
import { multipart, rawRequest, type RawAnswer } from "@app/testkit/raw-http";

/**
 * Fast regressions from the hostile corpus (`pnpm test:reliability` runs the whole of it),
 * against the gateway process: each of these once crashed the process, leaked a temporary, or
 * answered without a JSON body.
 */
const KEY = "rel-hostile-fast-key-0123456789";
let dir: string;
let gw: Service;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rel-hostile-fast-"));
  gw = await startService(SCRIPTS.gateway, { DATA_DIR: dir, API_KEYS: KEY });
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

function post(parts: Parameters<typeof multipart>[0], cut?: number): Promise<RawAnswer> {
  const m = multipart(parts);
  const body = cut === undefined ? m.body : m.body.subarray(0, cut);
  return rawRequest(gw.url, {
    method: "POST",
    path: "/api/upload/image",
    headers: { "X-API-Key": KEY, "Content-Type": m.contentType, "Content-Length": body.length },
    body,
  });
}

const alive = async () => expect((await rawRequest(gw.url, { path: "/healthz" })).status).toBe(200);

describe("hostile-input regressions through the gateway process", () => {
  it("a body that ends inside a file part other than 'image' is a 400, not a crash", async () => {
    const parts = [{ name: "mask", filename: "m.png", contentType: "image/png", body: tinyPng(1) }];
    const whole = multipart(parts).body.length;
    for (const cut of [120, whole - 40, whole - 10]) {
      const a = await post(parts, cut);
      expect(a.status).toBe(400);
      expect(a.json?.code).toBe("malformed_multipart");
      await alive();
    }
  });

  it("an 'image' part after a malformed one is never staged: no temporary is left", async () => {
    for (let i = 0; i < 20; i++) {
      const a = await post([
        { name: "overwrite", filename: "a\0b", contentType: "text/plain", body: "x" },
        { name: "x", body: "y" },
        { name: "image", filename: "a.png", contentType: "image/png", body: tinyPng(100 + i) },
      ]);
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
    }
    expect(await readdir(join(dir, "blobs", "tmp"))).toEqual([]);
    await alive();
  });

  it("oversized request headers: 431 with a JSON body in both faces' shapes", async () => {
    for (const path of ["/nodes/search", "/api/upload/image"]) {
      const a = await rawRequest(gw.url, { path, headers: { "X-Big": "b".repeat(40_000) } });
      expect(a.status).toBe(431);
      expect(a.json).toMatchObject({ error: "header_too_large", code: "header_too_large" });
      expect(typeof a.json?.message).toBe("string");
    }
    await alive();
  });
});
