import { randomBytes, randomUUID } from "node:crypto";
import type { RequestListener } from "node:http";
import request from "supertest";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ChosenBlobStore } from "@app/blobs";
import { blake3Hex } from "@app/testkit/assets";
import type { Mode } from "@app/testkit/asset-modes";
import { startAssetService, type AssetService } from "./asset-service.ts";
import { solidPng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * The behaviours of ComfyUI's own HTTP tests of its asset API (`tests-unit/assets_test/` in
 * comfyanonymous/ComfyUI), written again here against the upload service composed from config,
 * once per mode (comfy-asset-api.test.ts: embedded; comfy-asset-api-at-scale.test.ts), one `it`
 * per upstream test file (named in each title; services/upload/README.md maps them), plus the
 * owners this service adds (two keys, two principals). Cases that need ComfyUI's own folders on
 * disk (seeding, scanning, the write location) have none: those routes answer 501 here.
 */

const KEY = "comfy-asset-key-studio";
const KEY2 = "comfy-asset-key-partner";
const MODEL = ["models", "model_type:checkpoints", "unit-tests"];

type Json = Record<string, any>;

function binary(
  res: { on(event: string, listener: (chunk: Buffer) => void): unknown },
  cb: (err: Error | null, body: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  res.on("data", (d: Buffer) => chunks.push(d));
  res.on("end", () => cb(null, Buffer.concat(chunks)));
}

export function describeComfyAssetApi(mode: Mode): void {
  describe(`ComfyUI's asset API tests: ${mode.name}`, () => {
    let app: RequestListener;
    let store: ChosenBlobStore;
    let service: AssetService | undefined;
    let salt: Buffer;
    let scope: string;

    beforeAll(async () => {
      service = await startAssetService(mode, [KEY, KEY2]);
      ({ app, blobs: store } = service);
    }, 60_000);
    afterAll(async () => {
      await service?.close();
    });
    beforeEach(() => {
      salt = randomBytes(16);
      scope = `s-${randomUUID().slice(0, 8)}`;
    });

    /**
     * Distinct bytes per test, the same for the same (name, size) within one. The salt goes last:
     * random bytes first could spell a format's magic number (0xFF 0xFB is an MP3 frame), and a
     * probe would then type the file from them.
     */
    const bytes = (name: string, size = 2048): Buffer => {
      const seed = [...name].reduce((n, c) => n + c.charCodeAt(0), 0) % 251;
      const out = Buffer.alloc(size, 0).map((_, i) => (i * 31 + seed) % 256);
      salt.copy(out, Math.max(0, size - 16), 0, Math.min(16, size));
      return Buffer.from(out);
    };
    const get = (path: string, key = KEY) => keyedClient(app, key).get(path);
    const json = (method: "post" | "put" | "delete", path: string, body: unknown, key = KEY) =>
      request(app)
        [method](path)
        .set("x-api-key", key)
        .send(body as object);
    const post = (fields: [string, string][], file?: { name: string; data: Buffer }, key = KEY) => {
      let r = keyedClient(app, key).post("/api/assets");
      for (const [k, v] of fields) r = r.field(k, v);
      return file ? r.attach("file", file.data, { filename: file.name, contentType: "application/octet-stream" }) : r;
    };
    const upload = (name: string, tags: string[], meta: Json, data: Buffer, key = KEY, extra: [string, string][] = []) =>
      post([["tags", JSON.stringify(tags)], ["name", name], ["user_metadata", JSON.stringify(meta)], ...extra], { name, data }, key);
    const create = async (name: string, tags: string[], meta: Json = {}, data = bytes(name), key = KEY): Promise<Json> => {
      const res = await upload(name, tags, meta, data, key);
      expect([200, 201], JSON.stringify(res.body)).toContain(res.status);
      return res.body as Json;
    };
    const names = async (query: string, key = KEY): Promise<string[]> => {
      const res = await get(`/api/assets?${query}`, key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.assets as Json[]).map((a) => a.name as string);
    };
    const errorCode = (res: request.Response) => (res.body as Json).error?.code as string;
    const content = (path: string, key = KEY) => get(path, key).buffer(true).parse(binary);

    it("test_uploads.py: new bytes 201, known bytes 200 with a new record, the hash shortcut, destinations, bad forms", async () => {
      const data = bytes("dup_a");
      const objects = async () => (await store.list()).length;
      const first = await upload("dup_a.safetensors", [...MODEL, scope], { purpose: "dup" }, data);
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      expect(first.body).toMatchObject({
        created_new: true,
        hash: `blake3:${blake3Hex(data)}`,
        asset_hash: `blake3:${blake3Hex(data)}`,
        name: "dup_a.safetensors",
      });
      expect(first.body.mime_type).toBe("application/octet-stream");
      // As ComfyUI's upload_from_temp_path records it: the hash and the uploaded name's extension.
      expect(first.body.user_metadata).toEqual({ purpose: "dup", filename: `${blake3Hex(data)}.safetensors` });
      // The loader's file name: the hash with the uploaded name's extension, under its model category.
      const loader = { loader_path: `${blake3Hex(data)}.safetensors`, display_name: `checkpoints/${blake3Hex(data)}.safetensors` };
      expect(first.body).toMatchObject(loader);
      expect((await get(`/api/assets/${first.body.id}`)).body).toMatchObject(loader);
      expect((await get(`/api/assets?include_tags=${scope}&sort=created_at&order=asc&limit=1`)).body.assets[0]).toMatchObject({
        id: first.body.id,
        ...loader,
      });
      const png = await create(`${scope}.png`, ["input", scope], {}, bytes("input-png", 1024));
      expect([png.loader_path, png.display_name]).toEqual([`${png.asset_hash.slice(7)}.png`, `${png.asset_hash.slice(7)}.png`]);
      const before = await objects();
      const second = await upload("dup_a.safetensors", [...MODEL, scope], { purpose: "dup" }, data);
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ created_new: false, asset_hash: first.body.asset_hash });
      expect(second.body.id).not.toBe(first.body.id);
      // A record that wrote no file has no loader path (ComfyUI: duplicates, the hash shortcut, from-hash).
      expect([second.body.loader_path, second.body.display_name]).toEqual([undefined, undefined]);
      const third = await upload("dup_a.safetensors_d", [...MODEL, scope], {}, data);
      expect(new Set([first.body.id, second.body.id, third.body.id]).size).toBe(3);
      expect(await objects()).toBe(before); // re-uploads wrote nothing

      // The shortcut: a known hash and no file; a known hash sent before a file (the file is read and dropped).
      const hashOnly = await post([
        ["hash", first.body.asset_hash],
        ["tags", JSON.stringify(["models", "checkpoints", scope])],
        ["name", "fastpath_copy.safetensors"],
        ["user_metadata", '{"purpose":"copy"}'],
      ]);
      expect(hashOnly.status, JSON.stringify(hashOnly.body)).toBe(200);
      expect(hashOnly.body).toMatchObject({
        created_new: false,
        asset_hash: first.body.asset_hash,
        tags: ["models", "checkpoints", scope],
        user_metadata: { purpose: "copy" },
      });
      expect((await get(`/api/assets/${hashOnly.body.id}`)).status).toBe(200);
      expect(hashOnly.body.loader_path).toBeUndefined();
      // One hash rule (ComfyUI's strip().lower()): upper case names the same content on every route that takes a hash.
      const upperField = await post([
        ["hash", ` ${first.body.asset_hash.toUpperCase()} `],
        ["tags", JSON.stringify([scope])],
        ["name", "upper-field.bin"],
      ]);
      expect([upperField.status, upperField.body.asset_hash]).toEqual([200, first.body.asset_hash]);
      expect((await keyedClient(app, KEY).head(`/api/assets/hash/${first.body.asset_hash.toUpperCase()}`)).status).toBe(200);
      expect((await keyedClient(app, KEY).head(`/api/assets/hash/BLAKE3:${"F".repeat(64)}`)).status).toBe(404);
      expect((await keyedClient(app, KEY).head(`/api/assets/hash/blake3:${"g".repeat(64)}`)).status).toBe(400);
      const withFile = await post(
        [
          ["hash", first.body.asset_hash],
          ["tags", JSON.stringify(["models", "checkpoints", scope, "fp"])],
          ["name", "copy.safetensors"],
        ],
        { name: "ignored.bin", data: Buffer.from("ignored".repeat(10)) },
      );
      expect(withFile.status, JSON.stringify(withFile.body)).toBe(200);
      expect(withFile.body).toMatchObject({ created_new: false, asset_hash: first.body.asset_hash, size: data.length });
      expect(await objects()).toBe(before);
      const fromHash = await json("post", "/api/assets/from-hash", {
        hash: first.body.asset_hash,
        name: "from_hash_copy.safetensors",
        tags: [...MODEL, "spoofed", "models:foo", "temporary:true"],
      });
      expect(fromHash.status).toBe(201);
      expect(fromHash.body).toMatchObject({ created_new: false, tags: [...MODEL, "spoofed", "models:foo", "temporary:true"] });
      expect([fromHash.body.loader_path, fromHash.body.display_name]).toEqual([undefined, undefined]);
      const upper = await json("post", "/api/assets/from-hash", { hash: ` ${first.body.asset_hash.toUpperCase()} `, name: "upper.bin" });
      expect([upper.status, upper.body.asset_hash]).toEqual([201, first.body.asset_hash]);
      const missing = await json("post", "/api/assets/from-hash", {
        hash: `blake3:${"0".repeat(64)}`,
        name: "nonexistent.bin",
        tags: ["models"],
      });
      expect([missing.status, errorCode(missing)]).toEqual([404, "ASSET_NOT_FOUND"]);

      // Known bytes need no destination; new bytes need exactly one (and models one model_type).
      const dup = await upload("duplicate-copy.bin", ["not-a-destination", scope], {}, data);
      expect([dup.status, dup.body.created_new]).toEqual([200, false]);
      // A model_type must be one of ComfyUI's model folders: not `configs` or `custom_nodes`, nor an unknown one.
      const notModels = [
        ["models", "model_type:configs"],
        ["models", "model_type:custom_nodes"],
        ["models", "model_type:no_such_category"],
      ];
      for (const tags of [
        ["not-a-root", "whatever"],
        ["input", "output", scope],
        ["models"],
        ["models", "model_type:checkpoints", "model_type:loras"],
        [],
        ...notModels,
      ]) {
        const res = await upload("badroot.bin", tags, {}, bytes(`bad-${tags.join()}`, 64));
        expect([res.status, errorCode(res)], JSON.stringify(tags)).toEqual([400, "INVALID_BODY"]);
      }
      const labels = await upload(
        "evil.safetensors",
        [...MODEL, "..", "zzz", "model:true", "uploaded:true", scope],
        {},
        bytes("evil", 256),
      );
      expect(labels.status).toBe(201);
      expect(labels.body.tags).toEqual([...MODEL, "..", "zzz", "model:true", "uploaded:true", scope]);

      // Several tags fields merge (JSON arrays and comma lists), duplicates dropped.
      const merged = await post(
        [
          ["tags", "models,model_type:checkpoints"],
          ["tags", JSON.stringify(["unit-tests", scope, "models"])],
          ["name", "merge.safetensors"],
          ["user_metadata", '{"u":1}'],
        ],
        { name: "merge.safetensors", data: bytes("merge", 256) },
      );
      expect(merged.status).toBe(201);
      expect(merged.body.tags).toEqual([...MODEL, scope]);

      // Two uploads of the same new bytes at once: one record each, exactly one created_new.
      const same = bytes("concurrent", 4096);
      const racing = await Promise.all([upload("cu_a.bin", ["input", scope], {}, same), upload("cu_b.bin", ["input", scope], {}, same)]);
      expect(racing.map((r) => r.body.created_new).sort()).toEqual([false, true]);
      expect(racing[0].body.asset_hash).toBe(racing[1].body.asset_hash);
      expect(racing[0].body.id).not.toBe(racing[1].body.id);

      // The same display name with other bytes: both kept, each serving its own bytes.
      const v1 = await create("same_display.bin", ["input", scope], {}, bytes("v1", 1536));
      const v2 = await create("same_display.bin", ["input", scope], {}, bytes("v2", 2048));
      expect(v1.asset_hash).not.toBe(v2.asset_hash);
      expect(Buffer.compare((await content(`/api/assets/${v1.id}/content`).expect(200)).body as Buffer, bytes("v1", 1536))).toBe(0);
      expect(Buffer.compare((await content(`/api/assets/${v2.id}/content`).expect(200)).body as Buffer, bytes("v2", 2048))).toBe(0);

      // Refused forms store nothing.
      const stored = await objects();
      const empty = await upload("empty.safetensors", MODEL, {}, Buffer.alloc(0));
      expect([empty.status, errorCode(empty)]).toEqual([400, "EMPTY_UPLOAD"]);
      const badMeta = await post(
        [
          ["tags", JSON.stringify(MODEL)],
          ["name", "badmeta.bin"],
          ["user_metadata", "{not json}"],
        ],
        { name: "badmeta.bin", data: bytes("badmeta", 128) },
      );
      expect([badMeta.status, errorCode(badMeta)]).toEqual([400, "INVALID_BODY"]);
      const notMultipart = await json("post", "/api/assets", { foo: "bar" });
      expect([notMultipart.status, errorCode(notMultipart)]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
      const noFile = await post([
        ["tags", JSON.stringify(MODEL)],
        ["name", "x.safetensors"],
      ]);
      expect([noFile.status, errorCode(noFile)]).toEqual([400, "MISSING_FILE"]);
      const unknownHash = await post([
        ["hash", `blake3:${"1".repeat(64)}`],
        ["tags", JSON.stringify(MODEL)],
      ]);
      expect([unknownHash.status, errorCode(unknownHash)]).toEqual([400, "MISSING_FILE"]);
      const badHash = await post(
        [
          ["hash", "sha256:abc"],
          ["tags", JSON.stringify(MODEL)],
        ],
        { name: "x.bin", data: bytes("x") },
      );
      expect([badHash.status, errorCode(badHash), (badHash.body as Json).error?.message]).toEqual([
        400,
        "INVALID_HASH",
        "hash must be like 'blake3:<hex>'",
      ]);
      const mismatch = await post(
        [
          ["hash", `blake3:${"2".repeat(64)}`],
          ["tags", JSON.stringify(MODEL)],
        ],
        { name: "m.bin", data: bytes("mismatch") },
      );
      expect([mismatch.status, errorCode(mismatch)]).toEqual([400, "HASH_MISMATCH"]);
      expect(await objects()).toBe(stored);
    });

    it("any file type: sniffed from the bytes (never the declared type or name), images with their dimensions", async () => {
      const png = await solidPng(7, 3, { r: 9, g: salt[0]!, b: salt[1]!, alpha: 1 });
      const image = await post(
        [
          ["tags", JSON.stringify(["input", scope])],
          ["mime_type", "application/x-nothing"],
        ],
        { name: "photo.safetensors", data: png },
      );
      expect(image.status, JSON.stringify(image.body)).toBe(201);
      expect(image.body).toMatchObject({
        mime_type: "image/png",
        name: "photo.safetensors",
        user_metadata: { filename: `${blake3Hex(png)}.safetensors` },
      });
      const text = await create("notes.png", ["output", scope], {}, Buffer.from(`${salt.toString("hex")}\nline one\nline two\n`));
      expect(text.mime_type).toBe("text/plain");
      const declared = await post(
        [
          ["tags", JSON.stringify(["input", scope])],
          ["mime_type", "audio/x-custom"],
        ],
        { name: "clip.raw", data: Buffer.concat([Buffer.from([0, 1, 2, 255]), salt]) },
      );
      expect(declared.body.mime_type).toBe("audio/x-custom"); // the bytes said nothing: the declared type stands
      const svg = await create(
        "logo.svg",
        ["input", scope],
        {},
        Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><!--${salt.toString("hex")}--></svg>`),
      );
      expect(svg.mime_type).toBe("image/svg+xml");
    });

    it("test_crud.py: deleting a record removes the record; the content stays (HEAD 200)", async () => {
      const record = await create("crud.png", ["output", "unit-tests", scope]);
      expect((await get(`/api/assets/${record.id}`)).status).toBe(200);
      expect((await json("delete", `/api/assets/${record.id}`, undefined)).status).toBe(204);
      const gone = await get(`/api/assets/${record.id}`);
      expect([gone.status, errorCode(gone), gone.body.error.details]).toEqual([404, "ASSET_NOT_FOUND", { id: record.id }]);
      expect((await keyedClient(app, KEY).head(`/api/assets/hash/${record.asset_hash}`)).status).toBe(200);

      // test_update_asset_fields: a rename with new user_metadata keeps the tags, and user_metadata keeps its filename.
      const seeded = await create("unit_1.safetensors", [...MODEL, scope], { purpose: "seed" });
      const renamed = await json("put", `/api/assets/${seeded.id}`, {
        name: "unit_1_renamed.safetensors",
        user_metadata: { purpose: "updated", epoch: 2 },
      });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect(renamed.body).toMatchObject({
        name: "unit_1_renamed.safetensors",
        tags: seeded.tags,
        user_metadata: { purpose: "updated", epoch: 2, filename: seeded.user_metadata.filename },
      });
      const own = await json("put", `/api/assets/${seeded.id}`, { user_metadata: { filename: "mine.safetensors" } });
      expect(own.body.user_metadata).toEqual({ filename: "mine.safetensors" });
    });

    it("test_list_filter.py: paging, sorts, include/exclude, name_contains, tags_all/any/none and their conflicts, refine", async () => {
      const t = [...MODEL, scope];
      for (const [n, size] of [
        ["a1_u.safetensors", 1024],
        ["a2_u.safetensors", 3072],
        ["a3_u.safetensors", 2048],
      ] as const)
        await create(n, t, { epoch: 1 }, bytes(n, size));
      const p1 = (await get(`/api/assets?include_tags=unit-tests,${scope}&sort=name&order=asc&limit=2&offset=0`)).body;
      expect(p1.assets.map((a: Json) => a.name)).toEqual(["a1_u.safetensors", "a2_u.safetensors"]);
      expect(p1.has_more).toBe(true);
      for (const a of p1.assets) expect(a.hash).toBe(a.asset_hash);
      const p2 = (await get(`/api/assets?include_tags=unit-tests,${scope}&sort=name&order=asc&limit=2&offset=2`)).body;
      expect([p2.assets.map((a: Json) => a.name), p2.has_more]).toEqual([["a3_u.safetensors"], false]);
      expect(await names(`include_tags=${scope}&sort=size&order=asc`)).toEqual([
        "a1_u.safetensors",
        "a3_u.safetensors",
        "a2_u.safetensors",
      ]);
      expect(await names(`include_tags=${scope}&sort=size&order=desc`)).toEqual([
        "a2_u.safetensors",
        "a3_u.safetensors",
        "a1_u.safetensors",
      ]);
      expect((await get(`/api/assets?include_tags=${scope}&limit=2&offset=10`)).body).toMatchObject({
        assets: [],
        has_more: false,
        total: 3,
      });
      expect((await get(`/api/assets?include_tags=${scope}&limit=500`)).body.assets).toHaveLength(3);

      // updated_at moves on a rename; last_access_time on a download.
      const all = (await get(`/api/assets?include_tags=${scope}&sort=name&order=asc`)).body.assets as Json[];
      await json("put", `/api/assets/${all[1]!.id}`, { name: "upd_b_renamed.safetensors" }).expect(200);
      expect((await names(`include_tags=${scope}&sort=updated_at&order=desc`))[0]).toBe("upd_b_renamed.safetensors");
      await content(`/api/assets/${all[0]!.id}/content`).expect(200);
      expect((await names(`include_tags=${scope}&sort=last_access_time&order=desc`))[0]).toBe("a1_u.safetensors");

      // Tag filters: CSV trimmed, repeated, duplicated; case-sensitive.
      const alpha = await create("incvar_alpha.safetensors", [...t, "alpha", "Mixed"]);
      await create("incvar_beta.safetensors", [...t, "beta"]);
      for (const q of [
        `include_tags=unit-tests,${scope},alpha`,
        `include_tags=unit-tests&include_tags=${scope}&include_tags=alpha`,
        `include_tags=${encodeURIComponent(` unit-tests , ${scope} , alpha , alpha `)}`,
      ]) {
        expect(await names(q)).toEqual([alpha.name]);
      }
      expect(await names(`include_tags=${scope},mixed`)).toEqual([]);
      expect(await names(`include_tags=${scope},Mixed`)).toEqual([alpha.name]);
      expect(await names(`include_tags=${scope}&exclude_tags=beta&exclude_tags=beta&sort=name&order=asc`)).not.toContain(
        "incvar_beta.safetensors",
      );
      expect(await names("include_tags=non-existing-tag")).toEqual([]);

      // name_contains: case-insensitive, literal (no wildcards), with total.
      for (const n of ["CaseMix.SAFE", "foo_bar.safetensors", "fooxbar.safetensors", "foobar.safetensors"]) await create(n, t);
      expect(await names(`include_tags=${scope}&name_contains=casemix`)).toEqual(["CaseMix.SAFE"]);
      expect(await names(`include_tags=${scope}&name_contains=.SAFE`)).toContain("CaseMix.SAFE");
      const underscore = (await get(`/api/assets?include_tags=${scope}&name_contains=foo_bar`)).body;
      expect([underscore.assets.map((a: Json) => a.name), underscore.total]).toEqual([["foo_bar.safetensors"], 1]);

      // tags_any, tags_all, tags_none (wins over any), empty lists as absent, old names as aliases.
      const [x, y] = [`${scope}-x`, `${scope}-y`];
      await create("aa_x.safetensors", [...t, x]);
      await create("aa_y.safetensors", [...t, y]);
      await create("aa_xy.safetensors", [...t, x, y]);
      await create("aa_d.safetensors", [...MODEL, x]);
      expect(await names(`tags_any=${x},${y}&tags_all=${scope}&sort=name&order=asc`)).toEqual([
        "aa_x.safetensors",
        "aa_xy.safetensors",
        "aa_y.safetensors",
      ]);
      expect(await names(`tags_any=${x}&tags_none=${y}&sort=name&order=asc`)).toEqual(["aa_d.safetensors", "aa_x.safetensors"]);
      expect(await names(`tags_any=${x},${y}&tags_none=${x}`)).toEqual(["aa_y.safetensors"]); // a dead term is not an error
      expect(await names(`tags_all=${scope},${x}&tags_any=&tags_none=&sort=name&order=asc`)).toEqual([
        "aa_x.safetensors",
        "aa_xy.safetensors",
      ]);
      expect(await names(`include_tags=${scope},${x}&tags_all=&sort=name&order=asc`)).toEqual(
        await names(`tags_all=${scope},${x}&sort=name&order=asc`),
      );
      expect(await names(`include_tags=${scope}&tags_none=${x}&sort=name&order=asc`)).toEqual(
        await names(`tags_all=${scope}&exclude_tags=${x}&sort=name&order=asc`),
      );
      expect(await names(`include_tags=${scope}&exclude_tags=${scope}`)).toEqual([]); // old names alone: an empty 200

      const rejected: [string, Json][] = [
        ["include_tags=mx-x&tags_all=mx-y", { parameters: ["include_tags", "tags_all"] }],
        ["exclude_tags=mx-x&tags_none=mx-y", { parameters: ["exclude_tags", "tags_none"] }],
        ["tags_all=cf-x&tags_none=cf-x", { conflicting_tags: ["cf-x"], parameters: ["tags_all", "tags_none"] }],
        ["include_tags=cf-x&tags_none=cf-x", { conflicting_tags: ["cf-x"], parameters: ["include_tags", "tags_none"] }],
        ["tags_all=cf-a,cf-b&tags_none=cf-b,cf-c", { conflicting_tags: ["cf-b"], parameters: ["tags_all", "tags_none"] }],
      ];
      for (const [q, details] of rejected) {
        for (const path of ["/api/assets", "/api/assets/tags/refine"]) {
          const res = await get(`${path}?${q}`);
          expect([res.status, errorCode(res), res.body.error.details], `${path}?${q}`).toEqual([400, "INVALID_TAG_FILTER", details]);
        }
      }
      // test_tag_list_cap_applies_to_all_spellings: at most 100 distinct tags a parameter, `details.parameter` naming it.
      const tagsOf = (n: number, tag = (i: number) => `cap-${i}`) => Array.from({ length: n }, (_, i) => tag(i)).join(",");
      for (const param of ["tags_any", "include_tags", "tags_all", "tags_none", "exclude_tags"]) {
        const res = await get(`/api/assets?${param}=${tagsOf(101)}`);
        expect([res.status, errorCode(res), res.body.error.details.parameter, res.body.error.details.max], param).toEqual([
          400,
          "INVALID_TAG_FILTER",
          param,
          100,
        ]);
      }
      expect((await get(`/api/assets?tags_any=${tagsOf(100)}`)).status).toBe(200);
      expect((await get(`/api/assets?tags_any=${tagsOf(150, () => "cap-dup")}`)).status).toBe(200); // distinct tags count
      for (const q of ["offset=-1", "limit=abc", "limit=0", "metadata_filter=%7Bnot%20json"]) {
        const res = await get(`/api/assets?${q}`);
        expect([res.status, errorCode(res)], q).toEqual([400, "INVALID_QUERY"]);
      }
      const refine = (await get(`/api/assets/tags/refine?tags_any=${x},${y}&tags_none=${x}`)).body;
      expect(refine.tag_counts[y]).toBe(1);
      expect(refine.tag_counts[x]).toBeUndefined();
    });

    it("test_list_cursor.py: cursor walks, wins over offset, is bound to its sort and order, and is never minted past the end", async () => {
      const t = [...MODEL, scope];
      const seeded = ["cursor_00", "cursor_01", "cursor_02", "cursor_03", "cursor_04"];
      for (const [i, n] of seeded.entries()) await create(n, t, {}, bytes(n, 2048 + i));
      const base = `include_tags=${scope}&sort=name&order=asc&limit=2`;
      const walk = async (query: string): Promise<string[]> => {
        const seen: string[] = [];
        let after: string | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const body = (await get(`/api/assets?${query}${after ? `&after=${after}` : ""}`).expect(200)).body;
          seen.push(...body.assets.map((a: Json) => a.name));
          if (!body.next_cursor) {
            expect(body.has_more).toBe(false);
            expect("next_cursor" in body).toBe(false);
            return seen;
          }
          expect(body.has_more).toBe(true);
          after = body.next_cursor;
        }
        throw new Error("runaway cursor");
      };
      expect(await walk(base)).toEqual(seeded);
      for (const sort of ["created_at", "updated_at", "size", "last_access_time"]) {
        const seen = await walk(`include_tags=${scope}&sort=${sort}&order=desc&limit=2`);
        expect(new Set(seen)).toEqual(new Set(seeded));
        expect(seen).toHaveLength(seeded.length);
        if (sort === "size") expect(seen).toEqual([...seeded].reverse());
      }
      const first = (await get(`/api/assets?include_tags=${scope}&sort=name&order=asc&limit=1`)).body;
      expect(first.next_cursor).toBeTruthy();
      expect(await names(`include_tags=${scope}&sort=name&order=asc&limit=1&after=${first.next_cursor}&offset=999`)).toEqual(["cursor_01"]);
      for (const q of [
        `after=${first.next_cursor}&sort=created_at`,
        `after=${first.next_cursor}&sort=name&order=desc`,
        "after=not-a-real-cursor",
      ]) {
        const res = await get(`/api/assets?${q}`);
        expect([res.status, errorCode(res)], q).toEqual([400, "INVALID_CURSOR"]);
      }
      const overflow = Buffer.from(JSON.stringify({ s: "created_at", o: "desc", v: "999999999999999999999", id: "asset-x" })).toString(
        "base64url",
      );
      expect(errorCode(await get(`/api/assets?after=${overflow}&sort=created_at&order=desc`))).toBe("INVALID_CURSOR");
      // Exactly a multiple of the limit: no cursor to a phantom page; a deleted row does not shift the next page.
      const four = (await get(`/api/assets?include_tags=${scope}&sort=name&order=asc&limit=2&offset=1`)).body;
      const p1 = (await get(`/api/assets?${base}`)).body;
      await json("delete", `/api/assets/${p1.assets[0].id}`, undefined).expect(204);
      const p2 = (await get(`/api/assets?${base}&after=${p1.next_cursor}`)).body;
      expect(p2.assets.map((a: Json) => a.name)).toEqual(["cursor_02", "cursor_03"]);
      const p3 = (await get(`/api/assets?${base}&after=${p2.next_cursor}`)).body;
      expect([p3.assets.map((a: Json) => a.name), p3.has_more, p3.next_cursor]).toEqual([["cursor_04"], false, undefined]);
      expect(four.assets).toHaveLength(2);
    });

    it("test_metadata_filters.py: every key must match, type-strict; lists any-of; null is missing or null; objects by content", async () => {
      const t = [...MODEL, scope];
      const a = await create("mf_and_mix.safetensors", t, {
        purpose: "mix",
        epoch: 1,
        active: true,
        score: 1.23,
        flags: ["red", "green"],
        count: 0,
      });
      const b = await create("mf_null.safetensors", t, { maybe: null, epoch: 2, choices: [true, false] });
      const c = await create("mf_value.safetensors", t, {
        maybe: "x",
        config: { optimizer: "adam", lr: 0.001, schedule: { type: "cosine", warmup: 100 } },
        transforms: [
          { type: "crop", size: 128 },
          { type: "flip", p: 0.5 },
        ],
        mix: ["1", 1, true, null],
        "weird.key": "v1",
        "path/like": 7,
        ключ: "значение",
        emoji: "🐍",
      });
      const q = (filter: Json, extra = "") =>
        names(`include_tags=${scope}&sort=name&order=asc&metadata_filter=${encodeURIComponent(JSON.stringify(filter))}${extra}`);
      expect(await q({ purpose: "mix", epoch: 1, active: true, score: 1.23 })).toEqual([a.name]);
      expect(await q({ purpose: "mix", epoch: 2, active: true })).toEqual([]);
      expect(await q({ epoch: "1" })).toEqual([]);
      expect(await q({ active: "true" })).toEqual([]);
      expect(await q({ flags: ["blue", "green"] })).toEqual([a.name]);
      expect(await q({ flags: ["green", "green", "green"] })).toEqual([a.name]);
      expect(await q({ flags: ["blue", "yellow"] })).toEqual([]);
      expect(await q({ maybe: null })).toEqual([a.name, b.name]);
      expect(await q({ maybe: [null, "x"] })).toEqual([a.name, b.name, c.name]);
      expect(await q({ config: { schedule: { warmup: 100, type: "cosine" }, lr: 0.001, optimizer: "adam" } })).toEqual([c.name]);
      expect(await q({ config: { optimizer: "sgd" } })).toEqual([]);
      expect(await q({ transforms: { type: "flip", p: 0.5 } })).toEqual([c.name]);
      expect(await q({ transforms: { type: "rotate", deg: 90 } })).toEqual([]);
      expect(await q({ "weird.key": "v1", "path/like": 7, emoji: "🐍" })).toEqual([c.name]);
      expect(await q({ ключ: "значение" })).toEqual([c.name]);
      expect(await q({ count: 0 })).toEqual([a.name]);
      expect(await q({ choices: true })).toEqual([b.name]);
      expect(await q({ mix: [2, 1] })).toEqual([c.name]);
      expect(await q({ mix: false })).toEqual([]);
      expect(await q({ unknown: null })).toEqual([a.name, b.name, c.name]);
      expect(await q({ unknown: "x" })).toEqual([]);
      expect(await q({ epoch: 1 }, `&exclude_tags=beta&name_contains=mf_and`)).toEqual([a.name]);
      // Sort and page under a filter.
      for (const [n, size] of [
        ["mf_sort_1", 1024],
        ["mf_sort_2", 2048],
        ["mf_sort_3", 3072],
      ] as const)
        await create(n, [...t, "mf-sort"], { group: "g" }, bytes(n, size));
      const page = (
        await get(
          `/api/assets?include_tags=mf-sort,${scope}&metadata_filter=${encodeURIComponent('{"group":"g"}')}&sort=size&order=asc&limit=2`,
        )
      ).body;
      expect([page.assets.map((x: Json) => x.name), page.has_more, page.total]).toEqual([["mf_sort_1", "mf_sort_2"], true, 3]);
      const rest = (
        await get(
          `/api/assets?include_tags=mf-sort,${scope}&metadata_filter=${encodeURIComponent('{"group":"g"}')}&sort=size&order=asc&limit=2&offset=2`,
        )
      ).body;
      expect([rest.assets.map((x: Json) => x.name), rest.has_more]).toEqual([["mf_sort_3"], false]);
      const array = await get(`/api/assets?metadata_filter=${encodeURIComponent('[{"x":1}]')}`);
      expect([array.status, errorCode(array)]).toEqual([400, "INVALID_QUERY"]);
    });

    it("test_tags_api.py: counts (include_zero, prefix, orders), adding keeps case, removing, bad bodies", async () => {
      const seeded = await create("unit_1_example.safetensors", [...MODEL, "alpha", scope], {
        purpose: "test",
        flags: ["x", "y"],
        nullable: null,
      });
      const used = (await get("/api/tags?include_zero=false&limit=1000")).body.tags.map((t: Json) => t.name);
      expect(used).toEqual(expect.arrayContaining(["models", "model_type:checkpoints", scope]));
      const prefixed = (await get("/api/tags?include_zero=false&prefix=uni")).body.tags.map((t: Json) => t.name);
      expect(prefixed).toContain("unit-tests");
      expect(prefixed).not.toContain("models");
      const byName = (await get("/api/tags?include_zero=false&order=name_asc&limit=1000")).body.tags.map((t: Json) => t.name);
      expect(byName).toEqual([...byName].sort());

      const added = (await json("post", `/api/assets/${seeded.id}/tags`, { tags: ["NewTag", "unit-tests", "NewTag", "BETA"] }).expect(200))
        .body;
      expect(added).toMatchObject({ added: ["NewTag", "BETA"], already_present: ["unit-tests"] });
      const removed = (await json("delete", `/api/assets/${seeded.id}/tags`, { tags: ["NewTag", "does-not-exist"] }).expect(200)).body;
      expect(removed).toMatchObject({ removed: ["NewTag"], not_present: ["does-not-exist"] });
      expect((await get(`/api/assets/${seeded.id}`)).body.tags).toContain("BETA");
      const system = ["models", "model_type:manual", "model:true", "input:true", "uploaded:true", "temporary"];
      expect((await json("post", `/api/assets/${seeded.id}/tags`, { tags: system }).expect(200)).body.total_tags).toEqual(
        expect.arrayContaining(system),
      );

      // count_desc and name_asc under a prefix; a tag whose last record goes keeps a zero count only with include_zero.
      const [aaa, bbb] = [`${scope}-orderaaa`, `${scope}-orderbbb`];
      await json("post", `/api/assets/${seeded.id}/tags`, { tags: [aaa, bbb] }).expect(200);
      const copy = await json("post", "/api/assets/from-hash", {
        hash: seeded.asset_hash,
        name: "order_only_bbb.safetensors",
        tags: ["input", bbb],
      }).expect(201);
      expect((await get(`/api/tags?prefix=${scope}-order&include_zero=false`)).body.tags).toEqual([
        { name: bbb, count: 2 },
        { name: aaa, count: 1 },
      ]);
      expect((await get(`/api/tags?prefix=${scope}-order&include_zero=false&order=name_asc`)).body.tags.map((t: Json) => t.name)).toEqual([
        aaa,
        bbb,
      ]);
      await json("delete", `/api/assets/${copy.body.id}`, undefined).expect(204);
      await json("delete", `/api/assets/${seeded.id}`, undefined).expect(204);
      expect((await get(`/api/tags?prefix=${scope}-order&include_zero=false`)).body).toEqual({ tags: [], total: 0, has_more: false });
      expect((await get(`/api/tags?prefix=${scope}-order`)).body.tags).toEqual([
        { name: aaa, count: 0 },
        { name: bbb, count: 0 },
      ]);

      // '_' in a prefix is literal.
      await create("t1.bin", ["input", `pref_${scope}_ok`]);
      await create("t2.bin", ["input", `pref_${scope}xok`]);
      const under = (await get(`/api/tags?include_zero=false&prefix=pref_${scope}_`)).body;
      expect([under.tags.map((t: Json) => t.name), under.total]).toEqual([[`pref_${scope}_ok`], 1]);

      const target = await create("bodies.bin", ["input", scope]);
      for (const [method, body] of [
        ["post", { tags: [] }],
        ["delete", { tags: [123] }],
      ] as const) {
        const res = await json(method, `/api/assets/${target.id}/tags`, body);
        expect([res.status, errorCode(res)]).toEqual([400, "INVALID_BODY"]);
      }
      expect(errorCode(await get("/api/tags?limit=1001"))).toBe("INVALID_QUERY");
    });

    it("test_preview_url.py and test_downloads.py: previews, nominated previews, and what a browser may render", async () => {
      const png = await solidPng(4, 4, { r: salt[2]!, g: salt[3]!, b: 7 });
      const image = await create(`${scope}.png`, ["output", scope], {}, png);
      // A signed, expiring /api/view URL that needs no key (an <img> sends none), byte ranges included.
      expect(image.preview_url).toMatch(
        new RegExp(`^/api/view\\?asset=${image.asset_hash}&mime=image%2Fpng&expires=\\d+&signature=[\\w-]{43}$`),
      );
      const anonymous = (path: string) => request(app).get(path).buffer(true).parse(binary);
      const shown = await anonymous(image.preview_url).expect(200);
      expect(Buffer.compare(shown.body as Buffer, png)).toBe(0);
      expect(shown.headers["content-disposition"]).toMatch(/^inline; /);
      expect(shown.headers["content-type"]).toBe("image/png");
      const ranged = await anonymous(image.preview_url).set("range", "bytes=10-19").expect(206);
      expect(Buffer.compare(ranged.body as Buffer, png.subarray(10, 20))).toBe(0);
      // It lets no stranger in: any change to what was signed, or no signature, is refused, and /api/view without one still needs a key.
      const other = await create(`${scope}-other.png`, ["output", scope], {}, bytes("other-png"));
      const forged = [
        image.preview_url.replace(/signature=[\w-]+/, `signature=${"A".repeat(43)}`),
        image.preview_url.replace(/signature=[\w-]+$/, ""),
        image.preview_url.replace(image.asset_hash, other.asset_hash),
        image.preview_url.replace("mime=image%2Fpng", "mime=text%2Fhtml"),
        image.preview_url.replace(/expires=(\d+)/, (_m: string, e: string) => `expires=${Number(e) + 3600}`),
      ];
      for (const url of forged) expect([(await anonymous(url)).status, url]).toEqual([401, url]);
      expect((await anonymous(`/api/view?filename=${image.asset_hash.slice(7)}.png`)).status).toBe(401);
      await json("delete", `/api/assets/${image.id}/tags`, { tags: ["output"] }).expect(200);
      expect((await get(`/api/assets/${image.id}`)).body.preview_url).toBe(image.preview_url);

      // A model has no preview of its own; a nominated one stands in, until it is deleted.
      const model = await upload(`${scope}.safetensors`, [...MODEL, scope], {}, bytes("model"), KEY, [["preview_id", image.id]]);
      expect(model.body).toMatchObject({ preview_id: image.id, preview_url: image.preview_url });
      const bare = await create("bare.safetensors", [...MODEL, scope]);
      expect(bare.preview_url).toBeUndefined();
      expect((await get(`/api/assets?include_tags=${scope}&name_contains=bare`)).body.assets[0].preview_url).toBeUndefined();
      const set = await json("put", `/api/assets/${bare.id}`, { preview_id: image.id }).expect(200);
      expect(set.body.preview_url).toBe(image.preview_url);
      const foreign = await json("put", `/api/assets/${bare.id}`, { preview_id: randomUUID() });
      expect([foreign.status, errorCode(foreign)]).toEqual([400, "INVALID_BODY"]);
      await json("delete", `/api/assets/${image.id}`, undefined).expect(204);
      const after = (await get(`/api/assets/${bare.id}`)).body;
      expect([after.preview_id, after.preview_url]).toEqual([image.id, undefined]);
      expect((await json("put", `/api/assets/${bare.id}`, { preview_id: null }).expect(200)).body.preview_id).toBeUndefined();

      // Text previews; HTML and SVG never render here, whatever disposition asks.
      const text = await create(`${scope}.txt`, ["output", scope], {}, Buffer.from(`line one\nline two\n${scope}`));
      expect((await content(text.preview_url).expect(200)).headers["content-type"]).toMatch(/^text\/plain/);
      for (const [name, data] of [
        [`${scope}.html`, `<html><script>alert('${scope}')</script></html>`],
        [`${scope}.svg`, `<svg xmlns="http://www.w3.org/2000/svg"><script>alert('${scope}')</script></svg>`],
      ]) {
        const dangerous = await create(name!, ["output", scope], {}, Buffer.from(data!));
        for (const url of [dangerous.preview_url, `/api/assets/${dangerous.id}/content`]) {
          const res = await content(url).expect(200);
          expect(res.headers["content-type"], name).toMatch(/^application\/octet-stream/);
          expect(res.headers["content-disposition"], name).toMatch(/^attachment; /);
          expect(res.headers["x-content-type-options"]).toBe("nosniff");
        }
      }
    });

    it("owners: a key sees and changes only its owner's records; content is shared and survives the other owner's deletes", async () => {
      const data = bytes("shared");
      const mine = await create("mine.bin", ["input", scope, "mine"], {}, data, KEY);
      const theirs = await upload("theirs.bin", ["input", scope], {}, data, KEY2);
      expect([theirs.status, theirs.body.created_new]).toEqual([200, false]); // the bytes were known: shared, not stored twice
      for (const res of [
        await get(`/api/assets/${mine.id}`, KEY2),
        await get(`/api/assets/${mine.id}/content`, KEY2),
        await json("put", `/api/assets/${mine.id}`, { name: "stolen" }, KEY2),
        await json("post", `/api/assets/${mine.id}/tags`, { tags: ["x"] }, KEY2),
        await json("delete", `/api/assets/${mine.id}/tags`, { tags: ["mine"] }, KEY2),
        await json("delete", `/api/assets/${mine.id}`, undefined, KEY2),
      ]) {
        expect([res.status, errorCode(res)], JSON.stringify(res.body)).toEqual([404, "ASSET_NOT_FOUND"]);
      }
      // Another owner's record cannot be nominated as a preview either.
      expect(errorCode(await json("put", `/api/assets/${theirs.body.id}`, { preview_id: mine.id }, KEY2))).toBe("INVALID_BODY");
      expect(await names(`include_tags=${scope}`, KEY2)).toEqual(["theirs.bin"]);
      expect(await names(`include_tags=${scope}`, KEY)).toEqual(["mine.bin"]);
      expect((await get(`/api/tags?prefix=mine&include_zero=true`, KEY2)).body.tags).toEqual([]);
      expect((await get(`/api/assets/tags/refine?tags_all=${scope}`, KEY2)).body.tag_counts).toEqual({ input: 1, [scope]: 1 });
      // The other owner deletes every record of theirs: my record and the bytes stay.
      await json("delete", `/api/assets/${theirs.body.id}`, undefined, KEY2).expect(204);
      expect((await get(`/api/assets/${mine.id}`)).body.name).toBe("mine.bin");
      expect(Buffer.compare((await content(`/api/assets/${mine.id}/content`).expect(200)).body as Buffer, data)).toBe(0);
      // HEAD by hash is global (content is shared): either key may ask.
      for (const key of [KEY, KEY2]) expect((await keyedClient(app, key).head(`/api/assets/hash/${mine.asset_hash}`)).status).toBe(200);
      // ComfyUI's folder scans have no counterpart here.
      for (const [method, path] of [
        ["post", "/api/assets/seed"],
        ["get", "/api/assets/seed/status"],
        ["post", "/api/assets/seed/cancel"],
        ["post", "/api/assets/prune"],
      ] as const) {
        const res = await request(app)[method](path).set("x-api-key", KEY);
        expect([res.status, errorCode(res)], path).toEqual([501, "NOT_SUPPORTED"]);
      }
      const noKey = await request(app).get("/api/assets");
      expect([noKey.status, errorCode(noKey)]).toEqual([401, "UNAUTHORIZED"]);
    });
  });
}
