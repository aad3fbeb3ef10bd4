import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digestKey, loadApiKeys, parseKeyFile, readKeyFile } from "../src/adapters/keys/api-keys.ts";
import { expectUploadError, KEY, makeTestApp, OTHER_KEY, type TestApp } from "./helpers.ts";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";
import { childEnv } from "@app/testkit/env";

const FILE_KEY = "file-key-zyxwvutsrqponmlk";
let t: TestApp;
let keyDir: string;
beforeAll(async () => {
  keyDir = await mkdtemp(join(tmpdir(), "keys-"));
  const keyFile = join(keyDir, "api-keys.txt");
  await writeFile(keyFile, `# comment\n\nsha256:${digestKey(FILE_KEY).toString("hex")} ci runner\n`);
  t = await makeTestApp({ keyFile });
});
afterAll(async () => {
  await t.close();
  await rm(keyDir, { recursive: true, force: true });
});

const oneOff = (k: string) => k.slice(0, -1) + (k.endsWith("a") ? "b" : "a");

describe("API keys on the upload routes", () => {
  it.each([
    ["X-API-Key", (k: string) => ({ "X-API-Key": k })],
    ["Authorization: Bearer", (k: string) => ({ Authorization: `Bearer ${k}` })],
  ])("accepts a key from API_KEYS or the key file as %s", async (_label, header) => {
    for (const key of [KEY, OTHER_KEY, FILE_KEY]) {
      const res = await request(t.app)
        .post("/api/upload/image")
        .set(header(key))
        .attach("image", await noisePng(4, 4), { filename: "a.png" });
      expect(res.status).toBe(200);
    }
  });

  it.each([
    ["no key", {}],
    ["an empty key", { "X-API-Key": "" }],
    ["a wrong key", { "X-API-Key": "nope" }],
    ["a key one character off", { "X-API-Key": oneOff(KEY) }],
    ["a key one character short", { "X-API-Key": KEY.slice(0, -1) }],
    ["a Bearer key one character off", { Authorization: `Bearer ${oneOff(FILE_KEY)}` }],
    ["Basic auth instead of Bearer", { Authorization: `Basic ${Buffer.from(`u:${KEY}`).toString("base64")}` }],
    ["the key file's digest itself", { "X-API-Key": digestKey(FILE_KEY).toString("hex") }],
  ])("%s: 401 unauthorized on every route", async (_label, headers) => {
    for (const [method, path] of [
      ["post", "/api/upload/image"],
      ["post", "/upload/image"],
      ["post", "/api/upload/mask"],
      ["post", "/upload/mask"],
      ["get", "/api/view?filename=x.png"],
      ["get", "/view?filename=x.png"],
    ] as const) {
      const res = await request(t.app)
        [method](path)
        .set(headers as Record<string, string>);
      expect(res.status, `${method} ${path}`).toBe(401);
      expectUploadError(res.body, "unauthorized");
    }
  });

  it.each(["api_key", "apikey", "key", "token", "X-API-Key"])(
    "a key in the query string (%s) is refused, even a valid one",
    async (param) => {
      const noHeader = await request(t.app)
        .post(`/api/upload/image?${param}=${KEY}`)
        .attach("image", await noisePng(4, 4), { filename: "a.png" });
      expect(noHeader.status).toBe(401);
      expectUploadError(noHeader.body, "unauthorized");
      const withHeader = await keyedClient(t.app, KEY).get(`/api/view?filename=x.png&${param}=${KEY}`);
      expect(withHeader.status).toBe(401);
    },
  );

  it("never writes a key to the log, accepted or refused, in a header or the query string", async () => {
    t.logs.length = 0;
    await keyedClient(t.app, KEY)
      .post("/api/upload/image")
      .attach("image", await noisePng(4, 4), { filename: "a.png" });
    await request(t.app)
      .post("/api/upload/image")
      .set("Authorization", `Bearer ${FILE_KEY}`)
      .attach("image", Buffer.from("x"), { filename: "a.png" });
    await request(t.app).post("/api/upload/image").set("X-API-Key", oneOff(KEY));
    await request(t.app).get(`/api/view?api_key=${OTHER_KEY}&filename=a.png`);
    await request(t.app)
      .get(`/view?filename=${"d".repeat(64)}.png`)
      .set("Authorization", `Bearer ${OTHER_KEY}`);
    const all = t.logs.join("");
    expect(t.logs.length).toBeGreaterThanOrEqual(5); // the requests were logged
    for (const secret of [KEY, FILE_KEY, OTHER_KEY, oneOff(KEY)]) expect(all).not.toContain(secret);
    expect(all).toContain("ci runner"); // the label, which is what identifies a client
  });
});

describe("key file and CLI", () => {
  it("parses the documented format and refuses a malformed line", () => {
    const entries = parseKeyFile(`sha256:${"ab".repeat(32)} my laptop\n# c\nsha256:${"cd".repeat(32)}\n`);
    expect(entries.map((e) => e.label)).toEqual(["my laptop", "line 3"]);
    expect(() => parseKeyFile("plaintext-key\n")).toThrow(/line 1/);
  });

  it("`apikey create --label` prints a key once and appends only its hash", async () => {
    const dir = await mkdtemp(join(tmpdir(), "apikey-cli-"));
    try {
      const file = join(dir, "keys.txt");
      const run = promisify(execFile);
      const cli = join(import.meta.dirname, "../src/cli/apikey.ts");
      const env = childEnv({ API_KEYS_FILE: file, DATA_DIR: dir });
      const { stdout } = await run(process.execPath, ["--import", "tsx", cli, "create", "--label", "studio box"], { env });
      const key = stdout.trim();
      expect(key).toMatch(/^crs_[A-Za-z0-9_-]{43}$/);
      const text = await readFile(file, "utf8");
      expect(text).not.toContain(key);
      expect(text).toBe(`sha256:${digestKey(key).toString("hex")} studio box\n`);
      const keys = await loadApiKeys({ file });
      expect(keys.verify(key)?.label).toBe("studio box");
      expect(keys.verify(oneOff(key))).toBeNull();
      await expect(run(process.execPath, ["--import", "tsx", cli, "create"], { env })).rejects.toThrow();

      // Rotation: a new key with the same label (the same owner), the old one gone, other lines kept.
      await run(process.execPath, ["--import", "tsx", cli, "create", "--label", "other", "--limits", "upload_rpm=5"], { env });
      await run(process.execPath, ["--import", "tsx", cli, "create", "--label", "studio box"], { env }); // an overlap: two keys, one owner
      const rotated = (await run(process.execPath, ["--import", "tsx", cli, "rotate", "--label", "studio box"], { env })).stdout.trim();
      const after = await loadApiKeys({ file });
      expect(after.verify(rotated)?.label).toBe("studio box");
      expect(after.verify(key)).toBeNull();
      expect((await readKeyFile(file)).map((e) => e.label)).toEqual(["other", "studio box"]);
      await expect(run(process.execPath, ["--import", "tsx", cli, "rotate", "--label", "nobody"], { env })).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
