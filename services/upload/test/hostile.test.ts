import type { Server } from "node:http";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSET_QUERY_KEYS, assetApiFixedCases, assetApiRequests } from "@app/testkit/asset-api-requests";
import { errorCodeOf } from "@app/testkit/raw-http";
import { trickleJsonBodies } from "@app/testkit/slow-json-bodies";
import { blake3Hex, KEY, makeTestApp, multipart, noisePng, pngClaiming, type TestApp } from "./helpers.ts";

/**
 * Hostile input: a generated corpus (over 1,000 requests) plus fixed cases. Every answer must
 * be a 4xx (or a 200 for input that happens to be valid) in the `{code, message, error}`
 * shape: never a 500, never a crash, and the service keeps serving.
 */
let t: TestApp;
let server: Server;
let validPng: Buffer;
let originalName: string;
let cases = 0;

beforeAll(async () => {
  t = await makeTestApp({ settings: { maxBytes: 4 * 1024 * 1024, bodyTimeoutMs: 10_000 } });
  server = t.app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  validPng = await noisePng(6, 6);
  const up = await request(server).post("/api/upload/image").set("X-API-Key", KEY).attach("image", validPng, { filename: "o.png" });
  originalName = up.body.name;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await t.close();
  expect(cases).toBeGreaterThanOrEqual(1000);
});

function assertRefusedOrOk(status: number, body: unknown, allowOk: boolean): void {
  cases++;
  if (allowOk && status === 200) return;
  expect(status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
  expect(status, JSON.stringify(body)).toBeLessThan(500);
  const b = body as Record<string, unknown>;
  expect(typeof b.code).toBe("string");
  expect(b.error).toBe(b.code);
  expect(typeof b.message).toBe("string");
}

/** The asset routes' refusals: ComfyUI's envelope, `{error: {code: "UPPER_CASE", message, details}}`. */
function assertAssetRefused(status: number, body: unknown): void {
  expect(status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
  expect(status, JSON.stringify(body)).toBeLessThan(500);
  const error = (body as { error?: Record<string, unknown> }).error;
  expect(typeof error?.code === "string" && /^[A-Z_]+$/.test(error.code), JSON.stringify(body)).toBe(true);
  expect(typeof error!.message).toBe("string");
  expect(typeof error!.details).toBe("object");
}

const hexDigit = fc.constantFrom(..."0123456789abcdef");
const PATHS = ["/api/upload/image", "/upload/image", "/api/upload/mask", "/upload/mask"];
const nasty = fc.oneof(
  fc.constantFrom("..", "../..", "/etc/passwd", "a/../../b", "\0", "a\0b", "C:\\Windows", "\\\\host\\share", "~/x", "%2e%2e/", "\u202e\u0000", "clipspace"),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: fc.constantFrom(".", "/", "\\", "a", "\0", ":"), maxLength: 12 }),
);

describe("hostile input corpus", () => {
  it("malformed multipart bodies: bad or missing boundaries, random bytes, truncation", async () => {
    const valid = multipart([
      { name: "image", filename: "a.png", contentType: "image/png", body: validPng },
      { name: "subfolder", body: "x" },
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.oneof(
          fc.constant(valid.contentType),
          fc.constant("multipart/form-data"),
          fc.constant("multipart/form-data; boundary="),
          fc.constant("multipart/form-data; boundary=wrong"),
          fc.constant("multipart/mixed; boundary=----testboundary7MA4YWxk"),
          fc.constant("text/plain"),
          fc.constant("application/x-www-form-urlencoded"),
          fc.string({ unit: "binary-ascii", maxLength: 80 }).map((s) => `multipart/form-data; boundary=${s.replace(/[^\x20-\x7e]/g, "")}`),
        ),
        fc.oneof(
          fc.integer({ min: 0, max: valid.body.length - 1 }).map((n) => valid.body.subarray(0, n)),
          fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)),
          fc.tuple(fc.integer({ min: 0, max: valid.body.length - 1 }), fc.uint8Array({ minLength: 1, maxLength: 50 })).map(([at, junk]) =>
            Buffer.concat([valid.body.subarray(0, at), Buffer.from(junk), valid.body.subarray(at)]),
          ),
        ),
        async (path, contentType, body) => {
          const res = await request(server).post(path).set("X-API-Key", KEY).set("Content-Type", contentType).send(body);
          // Junk inserted into a part's bytes can still leave a valid multipart body (then 200 is right for /image).
          assertRefusedOrOk(res.status, res.body, path.endsWith("/image"));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("filenames, subfolders and types with '..', absolute paths, NUL and odd Unicode", async () => {
    await fc.assert(
      fc.asyncProperty(nasty, nasty, nasty, async (filename, subfolder, type) => {
        const { body, contentType } = multipart([
          { name: "image", filename: filename.replace(/["\r\n]/g, "_"), contentType: "image/png", body: validPng },
          { name: "subfolder", body: subfolder },
          { name: "type", body: type },
        ]);
        const res = await request(server).post("/api/upload/image").set("X-API-Key", KEY).set("Content-Type", contentType).send(body);
        assertRefusedOrOk(res.status, res.body, true);
        if (res.status === 200) {
          expect(res.body.name).toBe(originalOf(validPng));
          expect(res.body.subfolder).toBe(subfolder);
        }
        if (/(^|[\\/])\.\.([\\/]|$)/.test(subfolder) || subfolder.startsWith("/") || subfolder.includes("\0")) {
          expect(res.status).toBe(400);
        }
      }),
      { numRuns: 300 },
    );
    expect(await t.blobs.list()).toContain(blake3Hex(validPng));
  });

  it("original_ref of every wrong kind", async () => {
    const mask = await noisePng(6, 6);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.json(),
          fc.string({ unit: "binary", maxLength: 100 }),
          nasty,
          fc.string({ unit: hexDigit, minLength: 0, maxLength: 70 }).map((h) => `blake3:${h}`),
          fc.string({ unit: hexDigit, minLength: 64, maxLength: 64 }).map((h) => `${h}.png`),
          fc.record({ filename: fc.oneof(nasty, fc.integer(), fc.constant(null)), name: fc.anything() }).map((o) => JSON.stringify(o)),
          fc.constantFrom("{", "[]", "null", "true", '{"filename":{}}', `${originalName} [evil]`, `${originalName}/..`, "blake3:", "{}".repeat(1000)),
        ),
        async (ref) => {
          const { body, contentType } = multipart([
            { name: "image", filename: "m.png", contentType: "image/png", body: mask },
            { name: "original_ref", body: ref },
          ]);
          const res = await request(server).post("/api/upload/mask").set("X-API-Key", KEY).set("Content-Type", contentType).send(body);
          assertRefusedOrOk(res.status, res.body, false);
          expect(["invalid_original_ref", "original_not_found", "malformed_multipart"]).toContain(res.body.code);
        },
      ),
      { numRuns: 250 },
    );
  });

  it("images that lie about their type, and decompression bombs", async () => {
    const magic = [
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
      Buffer.from("GIF89a"),
      Buffer.from("RIFF\0\0\0\0WEBPVP8 "),
      Buffer.from("II*\0"),
      Buffer.from("\0\0\0\x1cftypavif"),
      Buffer.from("<svg"),
      Buffer.from("%PDF-1.4"),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.tuple(fc.constantFrom(...magic), fc.uint8Array({ maxLength: 3000 })).map(([m, rest]) => Buffer.concat([m, Buffer.from(rest)])),
          fc.tuple(fc.integer({ min: 16_385, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 2 ** 31 - 1 })).map(([w, h]) => pngClaiming(w, h)),
          fc.tuple(fc.integer({ min: 8193, max: 16_384 }), fc.integer({ min: 8193, max: 16_384 })).map(([w, h]) => pngClaiming(w, h)),
          // Cut inside the signature or IHDR. (The probe reads headers only: a body cut after a
          // valid header is accepted at upload and refused by the mask job; see the README.)
          fc.integer({ min: 1, max: 32 }).map((n) => validPng.subarray(0, n)),
        ),
        fc.constantFrom("image/png", "image/jpeg", "application/octet-stream", "text/html"),
        fc.constantFrom("/api/upload/image", "/api/upload/mask"),
        async (bytes, declared, path) => {
          const parts = [{ name: "image", filename: "cat.png", contentType: declared, body: bytes }, { name: "original_ref", body: originalName }];
          const { body, contentType } = multipart(parts);
          const res = await request(server).post(path).set("X-API-Key", KEY).set("Content-Type", contentType).send(body);
          assertRefusedOrOk(res.status, res.body, false);
          expect(["invalid_image", "image_too_large"]).toContain(res.body.code);
        },
      ),
      { numRuns: 250 },
    );
  });
});

describe("hostile input to the asset API", () => {
  it("ids, hashes, JSON bodies and queries of every wrong kind: a 4xx in shape, or a 2xx when valid after all", async () => {
    const created = await request(server).post("/api/assets/from-hash").set("X-API-Key", KEY).send({ hash: `blake3:${blake3Hex(validPng)}`, tags: ["keep"] });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const target = fc.oneof(fc.constant(id), fc.constant(id.toUpperCase()), nasty.map((n) => encodeURIComponent(n)), fc.uuid().map(String));
    const requests = assetApiRequests({
      id: target,
      hashRef: target.map((r) => encodeURIComponent(r)),
      storedHash: `blake3:${blake3Hex(validPng)}`,
      text: { hash: nasty, tags: [nasty], name: [nasty, fc.string({ maxLength: 600 })], nameTags: nasty },
      query: {
        keys: [...ASSET_QUERY_KEYS, "x"],
        values: [
          nasty,
          fc.integer({ min: -5, max: 1000 }).map(String),
          fc.constantFrom("name", "size", "asc", "desc", "created_at", "last_access_time", "count_desc", "name_asc"),
          fc.json({ maxDepth: 3 }),
        ],
        encode: encodeURIComponent,
      },
    });
    const verb = { GET: "get", HEAD: "head", POST: "post", PUT: "put", DELETE: "delete" } as const;
    await fc.assert(
      fc.asyncProperty(requests, async ({ route, method, path, body }) => {
        const r = request(server)[verb[method]](path).set("X-API-Key", KEY);
        const res = await (body === undefined ? r : r.set("Content-Type", "application/json").send(body));
        cases++;
        expect(res.status, `${route} ${JSON.stringify(res.body)}`).toBeLessThan(500);
        if (res.status >= 200 && res.status < 300) return;
        expect(res.status).toBeGreaterThanOrEqual(400);
        if (method === "HEAD") return; // no body on HEAD
        assertAssetRefused(res.status, res.body);
      }),
      { numRuns: 400 },
    );
    // Whatever was renamed or retagged, the record and its bytes are still there, and nothing was deleted.
    expect((await request(server).get(`/api/assets/${id}`).set("X-API-Key", KEY)).status).toBe(200);
    expect(await t.blobs.list()).toContain(blake3Hex(validPng));
  });

  it("a JSON body trickling in on each JSON route: 408 request_timeout once BODY_TIMEOUT_MS has passed, the connection closed", async () => {
    const created = await request(server).post("/api/assets/from-hash").set("X-API-Key", KEY).send({ hash: `blake3:${blake3Hex(validPng)}`, name: "slow target" });
    expect(created.status).toBe(201);
    const { bodyTimeoutMs } = t.deps.settings;
    t.deps.settings.bodyTimeoutMs = 500;
    try {
      const port = (server.address() as AddressInfo).port;
      for (const a of await trickleJsonBodies(`http://127.0.0.1:${port}`, { key: KEY, id: created.body.id, everyMs: 200, timeoutMs: 10_000 })) {
        cases++;
        expect(a.status, `${a.route}: ${a.text}`).toBe(408);
        expect(errorCodeOf(a.json), a.route).toBe("request_timeout");
      }
    } finally {
      t.deps.settings.bodyTimeoutMs = bodyTimeoutMs;
    }
    expect((await request(server).get(`/api/assets/${created.body.id}`).set("X-API-Key", KEY)).body.name).toBe("slow target");
  });
});

describe("fixed hostile cases of the asset API (issue 20, section 2)", () => {
  it("bounded tag filters, bounded nesting, one tag limit, __proto__ kept, refused uploads: each its answer, nothing stored", async () => {
    const bytes = await noisePng(3, 3);
    await request(server).post("/api/upload/image").set("X-API-Key", KEY).attach("image", bytes, { filename: "f.png" }).expect(200);
    const storedHash = `blake3:${blake3Hex(bytes)}`;
    const created = await request(server).post("/api/assets/from-hash").set("X-API-Key", KEY).send({ hash: storedHash, tags: ["fixed"] }).expect(201);
    const id = created.body.id as string;
    const stored = (await t.blobs.list()).length;
    const verb = { GET: "get", POST: "post", PUT: "put" } as const;
    for (const c of assetApiFixedCases({ id, storedHash })) {
      let r = request(server)[verb[c.method]](c.path).set("X-API-Key", KEY);
      // superagent would serialise a Buffer under a JSON type as {"type":"Buffer",…}: JSON goes as its text.
      if (c.body) r = r.set("Content-Type", c.contentType!).send(c.contentType === "application/json" ? c.body.toString("utf8") : c.body);
      const res = await r;
      cases++;
      expect(res.status, `${c.name}: ${res.text.slice(0, 300)}`).toBe(c.status);
      if (c.code) {
        assertAssetRefused(res.status, res.body);
        expect(res.body.error.code, c.name).toBe(c.code);
      }
      if (c.keeps) expect(res.text, c.name).toContain(c.keeps);
    }
    const record = (await request(server).get(`/api/assets/${id}`).set("X-API-Key", KEY).expect(200)).body;
    expect(record.tags).toHaveLength(64);
    expect((await t.blobs.list()).length).toBe(stored); // no refused upload stored a byte
    expect(await t.blobs.temporaries()).toEqual([]);
  });
});

describe("fixed hostile cases", () => {
  it("a part header of 200 kB", async () => {
    const boundary = "b0undary";
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${"a".repeat(200_000)}"\r\n\r\nxx\r\n--${boundary}--\r\n`,
    );
    const res = await request(server).post("/api/upload/image").set("X-API-Key", KEY).set("Content-Type", `multipart/form-data; boundary=${boundary}`).send(body);
    assertRefusedOrOk(res.status, res.body, false);
  });

  it("5,000 parts", async () => {
    const { body, contentType } = multipart(Array.from({ length: 5000 }, (_, i) => ({ name: `p${i}`, filename: i % 2 ? "f.png" : undefined, body: "v" })));
    const res = await request(server).post("/api/upload/image").set("X-API-Key", KEY).set("Content-Type", contentType).send(body);
    assertRefusedOrOk(res.status, res.body, false);
    expect(res.body.code).toBe("malformed_multipart");
  });

  it("a field of 100 MB, streamed: refused early, nothing buffered", async () => {
    const rssBefore = process.memoryUsage().rss;
    const res = await new Promise<{ status: number; body: string; sentWhenAnswered: number }>((resolve, reject) => {
      const boundary = "bnd";
      const req = httpRequest({
        host: "127.0.0.1",
        port: (server.address() as AddressInfo).port,
        method: "POST",
        path: "/api/upload/image",
        headers: { "x-api-key": KEY, "content-type": `multipart/form-data; boundary=${boundary}`, "transfer-encoding": "chunked" },
      });
      let sent = 0;
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let done = false;
      req.on("response", (r) => {
        let body = "";
        r.on("data", (d) => (body += d));
        const sentWhenAnswered = sent;
        r.on("end", () => {
          done = true;
          resolve({ status: r.statusCode ?? 0, body, sentWhenAnswered });
        });
      });
      req.on("error", (err) => {
        if (!done) setTimeout(() => (done ? undefined : reject(err)), 200);
      });
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="subfolder"\r\n\r\n`);
      const pump = () => {
        while (!done && sent < 100 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        if (!done) req.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    assertRefusedOrOk(res.status, JSON.parse(res.body), false);
    expect(res.sentWhenAnswered).toBeLessThan(100 * 1024 * 1024); // refused while the body was still coming
    // client and server share this process: a generous bound that a buffered 100 MB field would break
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(96 * 1024 * 1024);
  });

  it("the service is still up and stores valid uploads", async () => {
    expect((await request(server).get("/healthz")).status).toBe(200);
    const png = await noisePng(5, 5);
    const res = await request(server).post("/api/upload/image").set("X-API-Key", KEY).attach("image", png, { filename: "ok.png" });
    expect(res.status).toBe(200);
    expect(await t.blobs.temporaries()).toEqual([]);
    for (const hash of await t.blobs.list()) {
      const chunks: Buffer[] = [];
      for await (const c of await t.blobs.read(hash)) chunks.push(c as Buffer);
      expect(blake3Hex(Buffer.concat(chunks))).toBe(hash); // nothing corrupt under a hash name
    }
  });
});

function originalOf(bytes: Buffer): string {
  return `${blake3Hex(bytes)}.png`;
}
