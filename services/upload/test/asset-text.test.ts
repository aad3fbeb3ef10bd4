import request from "supertest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import { createPgReferenceStore } from "../src/adapters/references/pg-reference-store.ts";
import type { ReferenceStore } from "../src/adapters/references/reference-store.ts";
import { blake3Hex, KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { noisePng } from "@app/testkit/png";

/**
 * Text the asset API keeps in a database column (tags, names) and the text it matches against
 * them (tag filters, `name_contains`, `prefix`): neither database stores U+0000 or an unpaired
 * surrogate faithfully. node-sqlite3-wasm binds a string as a NUL-terminated C string, so
 * SQLite keeps `".\u0000x"` as `"."`; PostgreSQL refuses U+0000 in text and `pg` turns an
 * unpaired surrogate into U+FFFD. Such input is refused (400), never cut, changed or a 500.
 *
 * The hostile corpus found it as a 500 on `POST /api/assets/{id}/tags {"tags":["."]}` (shrunk):
 * an earlier request had added `".\u0000…"`, kept whole in the record's JSON but as `"."` in
 * `asset_tags`, so adding `"."` inserted `"."` there twice.
 */
const UNSTORABLE = [".\u0000", "\u0000", "a\u0000b", "\ud800", "x\udc00y", "\udbff"];

function suite(label: string, makeRefs: () => Promise<ReferenceStore | undefined>) {
  describe(label, () => {
    let t: TestApp;
    let id: string;
    const key = (r: request.Test) => r.set("X-API-Key", KEY);
    const json = (r: request.Test, body: unknown) => key(r).set("Content-Type", "application/json").send(JSON.stringify(body));

    beforeEach(async () => {
      const refs = await makeRefs();
      t = await makeTestApp(refs ? { references: refs } : {});
      const png = await noisePng(4, 4);
      await key(request(t.app).post("/api/upload/image")).attach("image", png, { filename: "o.png" }).expect(200);
      const created = await json(request(t.app).post("/api/assets/from-hash"), {
        hash: `blake3:${blake3Hex(png)}`,
        tags: ["keep"],
        name: "n.png",
      }).expect(201);
      id = created.body.id as string;
    });
    afterEach(async () => {
      await t.close();
    });

    it("the hostile corpus's sequence: a tag with U+0000 is refused, so adding '.' afterwards is a 200", async () => {
      const first = await json(request(t.app).post(`/api/assets/${id}/tags`), { tags: [".\u0000"] });
      expect(first.status).toBe(400);
      expect(first.body).toMatchObject({ error: { code: "INVALID_BODY" } });
      expect(first.body.error.message).toMatch(/^tags\.0: /);
      const second = await json(request(t.app).post(`/api/assets/${id}/tags`), { tags: ["."] });
      expect(second.status).toBe(200);
      expect(second.body).toEqual({ added: ["."], already_present: [], total_tags: ["keep", "."] });
    });

    it("tags and names that cannot be stored are refused on every body that carries them, and nothing changes", async () => {
      for (const bad of UNSTORABLE) {
        const answers = [
          await json(request(t.app).post(`/api/assets/${id}/tags`), { tags: ["ok", bad] }),
          await json(request(t.app).delete(`/api/assets/${id}/tags`), { tags: [bad] }),
          await json(request(t.app).put(`/api/assets/${id}`), { tags: [bad] }),
          await json(request(t.app).put(`/api/assets/${id}`), { name: `evil${bad}.exe` }),
          await json(request(t.app).post("/api/assets/from-hash"), { hash: `blake3:${"0".repeat(64)}`, tags: [bad] }),
          await json(request(t.app).post("/api/assets/from-hash"), { hash: `blake3:${"0".repeat(64)}`, name: bad }),
        ];
        for (const res of answers) {
          expect(res.status, `${JSON.stringify(bad)} ${JSON.stringify(res.body)}`).toBe(400);
          expect(res.body).toMatchObject({ error: { code: "INVALID_BODY" } });
          expect(res.body.error.message).toMatch(/^(tags\.\d+|name): must not contain U\+0000 or an unpaired surrogate/);
        }
      }
      const asset = (await key(request(t.app).get(`/api/assets/${id}`)).expect(200)).body;
      expect(asset).toMatchObject({ name: "n.png", tags: ["keep"] });
    });

    it("queries matching such text are refused rather than matched cut short (or a 500)", async () => {
      // A query string is decoded as UTF-8, which cannot carry an unpaired surrogate: U+0000 is what can arrive.
      for (const bad of UNSTORABLE.filter((b) => b.includes("\u0000"))) {
        const q = encodeURIComponent(`keep${bad}`);
        for (const path of [
          `/api/assets?include_tags=${q}`,
          `/api/assets?exclude_tags=x,${q}`,
          `/api/assets?name_contains=${q}`,
          `/api/tags?prefix=${q}`,
        ]) {
          const res = await key(request(t.app).get(path));
          expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(400);
          expect(res.body).toMatchObject({ error: { code: "INVALID_QUERY" } });
        }
      }
      // A cursor is JSON, which can: a forged one carrying either is refused like any cursor this service did not make.
      for (const bad of UNSTORABLE) {
        const after = Buffer.from(JSON.stringify({ s: "name", o: "asc", v: bad, id: "00000000-0000-4000-8000-000000000000" })).toString(
          "base64url",
        );
        const res = await key(request(t.app).get(`/api/assets?sort=name&order=asc&after=${after}`));
        expect(res.status, `${JSON.stringify(bad)} ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body).toMatchObject({ error: { code: "INVALID_CURSOR" } });
      }
      // Well-formed text, surrogate pairs included, is kept and matched whole.
      const emoji = "cat \ud83d\ude3a";
      await json(request(t.app).post(`/api/assets/${id}/tags`), { tags: [emoji] }).expect(200);
      const found = (await key(request(t.app).get(`/api/assets?include_tags=${encodeURIComponent(emoji)}`)).expect(200)).body;
      expect(found.assets.map((a: { id: string }) => a.id)).toEqual([id]);
      expect(found.assets[0].tags).toEqual(["keep", emoji]);
    });
  });
}

suite("SQLite (embedded)", async () => undefined);

describe("PostgreSQL", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase("asset_text");
  });
  afterAll(async () => {
    await db.drop();
  });
  suite("routes over PostgreSQL", async () => {
    const refs = createPgReferenceStore(db.url);
    await refs.init();
    // Each test starts from empty tables of this run's own database.
    await db.run("TRUNCATE asset_refs, asset_tags");
    return refs;
  });
});
