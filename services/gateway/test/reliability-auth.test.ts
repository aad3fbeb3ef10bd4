import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digestKey, loadApiKeys } from "@app/upload/internal";
import { tinyPng } from "@app/testkit/png";
import { SCRIPTS, startService, type Service } from "@app/testkit/processes";

/**
 * Auth through the real gateway process (embedded upload service) with LOG_LEVEL=debug: every
 * way of not presenting the right key in the header is a 401 in the upload error shape, the
 * key check is constant-time, and no key ever reaches a log line.
 */
const ENV_KEY = "rel-env-key-Q7uR2xW9zK4mN8pL";
const FILE_KEY = "rel-file-key-H3jT6vB1cY5sD0fG";
const oneOff = (k: string, at: number) => k.slice(0, at) + (k[at] === "a" ? "b" : "a") + k.slice(at + 1);
const WRONG_KEYS = [
  "nope",
  oneOff(ENV_KEY, ENV_KEY.length - 1),
  oneOff(ENV_KEY, 0),
  oneOff(FILE_KEY, 7),
  ENV_KEY.slice(0, -1),
  `${ENV_KEY}x`,
  ENV_KEY.toUpperCase(),
  digestKey(FILE_KEY).toString("hex"),
];

let dir: string;
let gw: Service;
const ROUTES = [
  ["POST", "/api/upload/image"],
  ["POST", "/upload/image"],
  ["POST", "/api/upload/mask"],
  ["GET", "/api/view?filename=x.png"],
  ["GET", "/view?filename=x.png"],
] as const;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rel-auth-"));
  const keyFile = join(dir, "keys.txt");
  await writeFile(keyFile, `sha256:${digestKey(FILE_KEY).toString("hex")} reliability\n`);
  gw = await startService(SCRIPTS.gateway, { DATA_DIR: join(dir, "data"), API_KEYS: ENV_KEY, API_KEYS_FILE: keyFile, LOG_LEVEL: "debug" });
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function call(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const init: RequestInit = { method, headers };
  if (method === "POST") {
    const form = new FormData();
    form.set("image", new Blob([new Uint8Array(tinyPng(1))], { type: "image/png" }), "a.png");
    init.body = form;
  }
  const res = await fetch(gw.url + path, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function expectUnauthorized(r: { status: number; body: Record<string, unknown> }, what: string): void {
  expect(r.status, what).toBe(401);
  expect(r.body.code, what).toBe("unauthorized");
  expect(r.body.error, what).toBe("unauthorized");
  expect(typeof r.body.message, what).toBe("string");
}

describe("API keys through the gateway process", () => {
  it("a right key (from API_KEYS or the key file, header or Bearer) is let in", async () => {
    const rights: Record<string, string>[] = [{ "X-API-Key": ENV_KEY }, { "X-API-Key": FILE_KEY }, { Authorization: `Bearer ${ENV_KEY}` }];
    for (const headers of rights) {
      const r = await call("POST", "/api/upload/image", headers);
      expect(r.status).toBe(200);
    }
  });

  it("no key, a wrong key, a key one character off or one short: 401 on every route", async () => {
    const cases: [string, Record<string, string>][] = [
      ["no key", {}],
      ["empty key", { "X-API-Key": "" }],
      ...WRONG_KEYS.map((k): [string, Record<string, string>] => [`wrong key ${k.length} chars`, { "X-API-Key": k }]),
      ...WRONG_KEYS.map((k): [string, Record<string, string>] => [`wrong Bearer ${k.length} chars`, { Authorization: `Bearer ${k}` }]),
    ];
    for (const [label, headers] of cases) {
      for (const [method, path] of ROUTES) expectUnauthorized(await call(method, path, headers), `${label}: ${method} ${path}`);
    }
  });

  it("a key in the query string instead of the header: 401, even when it is the right key", async () => {
    for (const name of ["api_key", "apikey", "key", "x-api-key", "token", "access_token"]) {
      for (const [method, path] of ROUTES) {
        const sep = path.includes("?") ? "&" : "?";
        expectUnauthorized(await call(method, `${path}${sep}${name}=${ENV_KEY}`, {}), `${name} on ${path}`);
        // Also refused beside a right header: a key in a URL leaks into logs and proxies, the client must fix it.
        expectUnauthorized(await call(method, `${path}${sep}${name}=${ENV_KEY}`, { "X-API-Key": ENV_KEY }), `${name} + header on ${path}`);
      }
    }
  });

  it("no key, right or wrong, appears in any log line (LOG_LEVEL=debug)", async () => {
    await call("GET", `/api/view?filename=${FILE_KEY}.png`, { "X-API-Key": ENV_KEY });
    await new Promise((r) => setTimeout(r, 300)); // let the child flush its last lines
    const lines = gw.output;
    expect(lines.length, "the gateway logs requests at debug level").toBeGreaterThan(50);
    for (const key of [ENV_KEY, FILE_KEY, ...WRONG_KEYS.filter((k) => k.length > 8)]) {
      const leaks = lines.filter((l) => l.includes(key));
      expect(leaks, `log lines holding ${key.slice(0, 6)}…`).toEqual([]);
    }
  });
});

describe("the key checker", () => {
  it("refuses keys of every other length without throwing", async () => {
    const keys = await loadApiKeys({ plaintext: `${ENV_KEY},${FILE_KEY}` });
    expect(keys.verify(ENV_KEY)).not.toBeNull();
    for (const k of [
      "",
      "a",
      ENV_KEY.slice(0, -1),
      `${ENV_KEY}${ENV_KEY}`,
      "x".repeat(100_000),
      "🔑".repeat(40),
      "\0",
      oneOff(ENV_KEY, 3),
    ]) {
      expect(() => keys.verify(k)).not.toThrow();
      expect(keys.verify(k)).toBeNull();
    }
  });

  it("compares fixed-length SHA-256 digests with timingSafeEqual, never the keys themselves", () => {
    expect(digestKey("a").length).toBe(32);
    expect(digestKey("x".repeat(10_000)).length).toBe(32);
    const source = readFileSync(fileURLToPath(new URL("../../upload/src/adapters/keys/api-keys.ts", import.meta.url)), "utf8");
    expect(source).toMatch(/createHash\("sha256"\)/);
    expect(source).toMatch(/timingSafeEqual\(digest, e\.digest\)/);
    // Every stored digest is compared (no early return inside the loop), so timing does not tell which matched.
    const verify = /verify\(presented: string\): ApiKey \| null \{([\s\S]*?)\n {2}\}/.exec(source)?.[1] ?? "";
    const loop = /for \(const e of this\.entries\) \{([\s\S]*?)\n {4}\}/.exec(verify)?.[1];
    expect(loop).toBeDefined();
    expect(loop).not.toMatch(/return|break/);
    // And no plain comparison of presented keys anywhere.
    expect(source).not.toMatch(/presented\s*===|===\s*presented/);
  });
});
