import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { keyedClient } from "@app/testkit/keyed-client";
import { noisePng, pngClaiming } from "@app/testkit/png";
import { blake3Hex, KEY, multipart } from "./helpers.ts";
import { hostileService, nasty } from "./hostile-service.ts";

/**
 * Hostile input to the upload routes: a generated corpus (over 1,000 requests) plus fixed cases.
 * Every answer must be a 4xx (or a 200 for input that happens to be valid) in the
 * `{code, message, error}` shape: never a 500, never a crash, and the service keeps serving.
 * The asset API's: hostile-assets.test.ts.
 */
const h = hostileService(1000);

const hexDigit = fc.constantFrom(..."0123456789abcdef");
const PATHS = ["/api/upload/image", "/upload/image", "/api/upload/mask", "/upload/mask"];

describe("hostile input corpus", () => {
  it("malformed multipart bodies: bad or missing boundaries, random bytes, truncation", async () => {
    const valid = multipart([
      { name: "image", filename: "a.png", contentType: "image/png", body: h.validPng },
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
          fc
            .tuple(fc.integer({ min: 0, max: valid.body.length - 1 }), fc.uint8Array({ minLength: 1, maxLength: 50 }))
            .map(([at, junk]) => Buffer.concat([valid.body.subarray(0, at), Buffer.from(junk), valid.body.subarray(at)])),
        ),
        async (path, contentType, body) => {
          const res = await keyedClient(h.server, KEY).post(path).set("Content-Type", contentType).send(body);
          // Junk inserted into a part's bytes can still leave a valid multipart body (then 200 is right for /image).
          h.assertRefusedOrOk(res.status, res.body, path.endsWith("/image"));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("filenames, subfolders and types with '..', absolute paths, NUL and odd Unicode", async () => {
    await fc.assert(
      fc.asyncProperty(nasty, nasty, nasty, async (filename, subfolder, type) => {
        const { body, contentType } = multipart([
          { name: "image", filename: filename.replace(/["\r\n]/g, "_"), contentType: "image/png", body: h.validPng },
          { name: "subfolder", body: subfolder },
          { name: "type", body: type },
        ]);
        const res = await keyedClient(h.server, KEY).post("/api/upload/image").set("Content-Type", contentType).send(body);
        h.assertRefusedOrOk(res.status, res.body, true);
        if (res.status === 200) {
          expect(res.body.name).toBe(originalOf(h.validPng));
          expect(res.body.subfolder).toBe(subfolder);
        }
        if (/(^|[\\/])\.\.([\\/]|$)/.test(subfolder) || subfolder.startsWith("/") || subfolder.includes("\0")) {
          expect(res.status).toBe(400);
        }
      }),
      { numRuns: 300 },
    );
    expect(await h.t.blobs.list()).toContain(blake3Hex(h.validPng));
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
          fc.constantFrom(
            "{",
            "[]",
            "null",
            "true",
            '{"filename":{}}',
            `${h.originalName} [evil]`,
            `${h.originalName}/..`,
            "blake3:",
            "{}".repeat(1000),
          ),
        ),
        async (ref) => {
          const { body, contentType } = multipart([
            { name: "image", filename: "m.png", contentType: "image/png", body: mask },
            { name: "original_ref", body: ref },
          ]);
          const res = await keyedClient(h.server, KEY).post("/api/upload/mask").set("Content-Type", contentType).send(body);
          h.assertRefusedOrOk(res.status, res.body, false);
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
          fc
            .tuple(fc.integer({ min: 16_385, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }))
            .map(([w, h]) => pngClaiming(w, h)),
          fc.tuple(fc.integer({ min: 8193, max: 16_384 }), fc.integer({ min: 8193, max: 16_384 })).map(([w, h]) => pngClaiming(w, h)),
          // Cut inside the signature or IHDR. (The probe reads headers only: a body cut after a
          // valid header is accepted at upload and refused by the mask job; see the README.)
          fc.integer({ min: 1, max: 32 }).map((n) => h.validPng.subarray(0, n)),
        ),
        fc.constantFrom("image/png", "image/jpeg", "application/octet-stream", "text/html"),
        fc.constantFrom("/api/upload/image", "/api/upload/mask"),
        async (bytes, declared, path) => {
          const parts = [
            { name: "image", filename: "cat.png", contentType: declared, body: bytes },
            { name: "original_ref", body: h.originalName },
          ];
          const { body, contentType } = multipart(parts);
          const res = await keyedClient(h.server, KEY).post(path).set("Content-Type", contentType).send(body);
          h.assertRefusedOrOk(res.status, res.body, false);
          expect(["invalid_image", "image_too_large"]).toContain(res.body.code);
        },
      ),
      { numRuns: 250 },
    );
  });
});

describe("fixed hostile cases", () => {
  it("a part header of 200 kB", async () => {
    const boundary = "b0undary";
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${"a".repeat(200_000)}"\r\n\r\nxx\r\n--${boundary}--\r\n`,
    );
    const res = await keyedClient(h.server, KEY)
      .post("/api/upload/image")
      .set("Content-Type", `multipart/form-data; boundary=${boundary}`)
      .send(body);
    h.assertRefusedOrOk(res.status, res.body, false);
  });

  it("5,000 parts", async () => {
    const { body, contentType } = multipart(
      Array.from({ length: 5000 }, (_, i) => ({ name: `p${i}`, filename: i % 2 ? "f.png" : undefined, body: "v" })),
    );
    const res = await keyedClient(h.server, KEY).post("/api/upload/image").set("Content-Type", contentType).send(body);
    h.assertRefusedOrOk(res.status, res.body, false);
    expect(res.body.code).toBe("malformed_multipart");
  });

  it("a field of 100 MB, streamed: refused early, nothing buffered", async () => {
    const rssBefore = process.memoryUsage().rss;
    const res = await new Promise<{ status: number; body: string; sentWhenAnswered: number }>((resolve, reject) => {
      const boundary = "bnd";
      const req = httpRequest({
        host: "127.0.0.1",
        port: (h.server.address() as AddressInfo).port,
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
    h.assertRefusedOrOk(res.status, JSON.parse(res.body), false);
    expect(res.sentWhenAnswered).toBeLessThan(100 * 1024 * 1024); // refused while the body was still coming
    // client and server share this process: a generous bound that a buffered 100 MB field would break
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(96 * 1024 * 1024);
  });

  it("the service is still up and stores valid uploads", async () => {
    expect((await request(h.server).get("/healthz")).status).toBe(200);
    const png = await noisePng(5, 5);
    const res = await keyedClient(h.server, KEY).post("/api/upload/image").attach("image", png, { filename: "ok.png" });
    expect(res.status).toBe(200);
    expect(await h.t.blobs.temporaries()).toEqual([]);
    for (const hash of await h.t.blobs.list()) {
      const chunks: Buffer[] = [];
      for await (const c of await h.t.blobs.read(hash)) chunks.push(c as Buffer);
      expect(blake3Hex(Buffer.concat(chunks))).toBe(hash); // nothing corrupt under a hash name
    }
  });
});

function originalOf(bytes: Buffer): string {
  return `${blake3Hex(bytes)}.png`;
}
