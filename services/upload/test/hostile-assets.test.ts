import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ASSET_QUERY_KEYS, assetApiFixedCases, assetApiRequests } from "@app/testkit/asset-api-requests";
import { keyedClient } from "@app/testkit/keyed-client";
import { noisePng } from "@app/testkit/png";
import { errorCodeOf } from "@app/testkit/raw-http";
import { trickleJsonBodies } from "@app/testkit/slow-json-bodies";
import { blake3Hex, KEY } from "./helpers.ts";
import { assertAssetRefused, hostileService, nasty } from "./hostile-service.ts";

/**
 * Hostile input to the asset API: a generated corpus (400 requests), JSON bodies trickling in and
 * the fixed cases that once got a 500 or slipped a limit. Every refusal is a 4xx in ComfyUI's envelope: never a 500, never a
 * crash. A file of its own beside hostile.test.ts (the upload routes'), so the two corpora run at once.
 */
const h = hostileService(400);

describe("hostile input to the asset API", () => {
  it("ids, hashes, JSON bodies and queries of every wrong kind: a 4xx in shape, or a 2xx when valid after all", async () => {
    const created = await keyedClient(h.server, KEY)
      .post("/api/assets/from-hash")
      .send({ hash: `blake3:${blake3Hex(h.validPng)}`, tags: ["keep"] });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const target = fc.oneof(
      fc.constant(id),
      fc.constant(id.toUpperCase()),
      nasty.map((n) => encodeURIComponent(n)),
      fc.uuid().map(String),
    );
    const requests = assetApiRequests({
      id: target,
      hashRef: target.map((r) => encodeURIComponent(r)),
      storedHash: `blake3:${blake3Hex(h.validPng)}`,
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
        const r = keyedClient(h.server, KEY)[verb[method]](path);
        const res = await (body === undefined ? r : r.set("Content-Type", "application/json").send(body));
        h.cases++;
        expect(res.status, `${route} ${JSON.stringify(res.body)}`).toBeLessThan(500);
        if (res.status >= 200 && res.status < 300) return;
        expect(res.status).toBeGreaterThanOrEqual(400);
        if (method === "HEAD") return; // no body on HEAD
        assertAssetRefused(res.status, res.body);
      }),
      { numRuns: 400 },
    );
    // Whatever was renamed or retagged, the record and its bytes are still there, and nothing was deleted.
    expect((await keyedClient(h.server, KEY).get(`/api/assets/${id}`)).status).toBe(200);
    expect(await h.t.blobs.list()).toContain(blake3Hex(h.validPng));
  });

  it("a JSON body trickling in on each JSON route: 408 request_timeout once BODY_TIMEOUT_MS has passed, the connection closed", async () => {
    const created = await keyedClient(h.server, KEY)
      .post("/api/assets/from-hash")
      .send({ hash: `blake3:${blake3Hex(h.validPng)}`, name: "slow target" });
    expect(created.status).toBe(201);
    const { bodyTimeoutMs } = h.t.deps.settings;
    h.t.deps.settings.bodyTimeoutMs = 500;
    try {
      const port = (h.server.address() as AddressInfo).port;
      for (const a of await trickleJsonBodies(`http://127.0.0.1:${port}`, {
        key: KEY,
        id: created.body.id,
        everyMs: 200,
        timeoutMs: 10_000,
      })) {
        h.cases++;
        expect(a.status, `${a.route}: ${a.text}`).toBe(408);
        expect(errorCodeOf(a.json), a.route).toBe("request_timeout");
      }
    } finally {
      h.t.deps.settings.bodyTimeoutMs = bodyTimeoutMs;
    }
    expect((await keyedClient(h.server, KEY).get(`/api/assets/${created.body.id}`)).body.name).toBe("slow target");
  });
});

describe("fixed hostile cases of the asset API (issue 20, section 2)", () => {
  it("bounded tag filters, bounded nesting, one tag limit, __proto__ kept, refused uploads: each its answer, nothing stored", async () => {
    const bytes = await noisePng(3, 3);
    await keyedClient(h.server, KEY).post("/api/upload/image").attach("image", bytes, { filename: "f.png" }).expect(200);
    const storedHash = `blake3:${blake3Hex(bytes)}`;
    const created = await keyedClient(h.server, KEY)
      .post("/api/assets/from-hash")
      .send({ hash: storedHash, tags: ["fixed"] })
      .expect(201);
    const id = created.body.id as string;
    const stored = (await h.t.blobs.list()).length;
    const verb = { GET: "get", POST: "post", PUT: "put" } as const;
    for (const c of assetApiFixedCases({ id, storedHash })) {
      let r = keyedClient(h.server, KEY)[verb[c.method]](c.path);
      // superagent would serialise a Buffer under a JSON type as {"type":"Buffer",…}: JSON goes as its text.
      if (c.body) r = r.set("Content-Type", c.contentType!).send(c.contentType === "application/json" ? c.body.toString("utf8") : c.body);
      const res = await r;
      h.cases++;
      expect(res.status, `${c.name}: ${res.text.slice(0, 300)}`).toBe(c.status);
      if (c.code) {
        assertAssetRefused(res.status, res.body);
        expect(res.body.error.code, c.name).toBe(c.code);
      }
      if (c.keeps) expect(res.text, c.name).toContain(c.keeps);
    }
    const record = (await keyedClient(h.server, KEY).get(`/api/assets/${id}`).expect(200)).body;
    expect(record.tags).toHaveLength(64);
    expect((await h.t.blobs.list()).length).toBe(stored); // no refused upload stored a byte
    expect(await h.t.blobs.temporaries()).toEqual([]);
  });
});
