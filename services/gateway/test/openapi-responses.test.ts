import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsImport from "ajv-formats";
import request, { type Response } from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestListener } from "node:http";
import { buildOpenApiDocument } from "@app/contracts";
import { VERSIONED_CATALOG } from "@app/testkit/registry-versions-catalog";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import { openApiRouter } from "../src/openapi-route.ts";
import { solidPng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => void;
const KEY = "openapi-test-key";
const doc = buildOpenApiDocument() as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>;
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...doc, $id: "openapi.json" });

/** Check a real response against what the document declares for its route, method and status. */
function expectConforms(path: string, method: string, res: Response): void {
  const declared = doc.paths[path]?.[method]?.responses[String(res.status)];
  expect(declared, `${method.toUpperCase()} ${path} answered ${res.status}, which the document does not declare`).toBeDefined();
  const schema = declared!.content?.["application/json"]?.schema as { $ref?: string } | undefined;
  if (!schema?.$ref) return;
  const validate = ajv.getSchema(`openapi.json${schema.$ref}`)!;
  const ok = validate(res.body);
  expect(
    ok,
    `${method.toUpperCase()} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`,
  ).toBe(true);
}

/** Packs with versions, classes, a banned and a deleted one: every registry route has something to answer. */
const CATALOG = VERSIONED_CATALOG;

describe("every route answers what /openapi.json declares", () => {
  let app: RequestListener;
  let closables: Closable[];
  let dataDir: string;
  let imageName: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "gw-openapi-"));
    const catalog = join(dataDir, "catalog.ndjson");
    writeFileSync(catalog, CATALOG.map((r) => JSON.stringify(r)).join("\n"));
    const config = loadConfig({ DATA_DIR: dataDir, CATALOG_SOURCE: catalog, API_KEYS: KEY, LOG_LEVEL: "silent" });
    const logger = createLogger("gw-openapi", "silent");
    const composed = await composeGateway(config, logger);
    closables = composed.closables;
    app = createGatewayApp({ services: composed.services, logger, extraRoutes: openApiRouter() });
    for (let i = 0; i < 100 && (await request(app).get("/readyz")).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  });

  afterAll(async () => {
    for (const c of closables) await c.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("registry routes: pages, nodes and errors", async () => {
    for (const path of ["/nodes/search", "/nodes"]) {
      const ok = await request(app).get(`${path}?search=impact&limit=5`).expect(200);
      expect(ok.body.nodes[0].id).toBe("comfyui-impact-pack");
      expectConforms(path, "get", ok);
      expectConforms(path, "get", await request(app).get(`${path}?limit=0`).expect(400));
      expectConforms(path, "get", await request(app).get(`${path}?include_banned=maybe`).expect(400));
    }
    const node = await request(app).get("/nodes/comfyui-impact-pack").expect(200);
    expect(node.body.publisher).toEqual({ id: "ltdrdata", name: "Dr.Lt.Data" });
    expectConforms("/nodes/{nodeId}", "get", node);
    expectConforms("/nodes/{nodeId}", "get", await request(app).get("/nodes/deleted-pack").expect(404));
    expectConforms("/nodes/{nodeId}", "get", await request(app).get("/nodes/banned-pack").expect(403));
    expectConforms("/nodes/{nodeId}", "get", await request(app).get("/nodes/banned-pack?include_banned=true").expect(200));
    expectConforms("/nodes/{nodeId}", "get", await request(app).get("/nodes/withdrawn-pack").expect(200));
    expectConforms("/nodes/{nodeId}/install", "get", await request(app).get("/nodes/withdrawn-pack/install").expect(404));
    const classes = "/nodes/{nodeId}/versions/{version}/comfy-nodes";
    expectConforms(classes, "get", await request(app).get("/nodes/comfyui-impact-pack/versions/latest/comfy-nodes").expect(200));
    expectConforms(classes, "get", await request(app).get("/nodes/comfyui-impact-pack/versions/0.0.0/comfy-nodes").expect(404));
    expectConforms(
      classes,
      "get",
      await request(app).get("/nodes/comfyui-impact-pack/versions/latest/comfy-nodes?include_banned=x").expect(400),
    );
  });

  it("the registry's read routes: answers, redirects and errors", async () => {
    const cases: [path: string, url: string, status: number][] = [
      ["/nodes/{nodeId}", "/nodes/comfyui-kjnodes", 302],
      ["/nodes/{nodeId}/install", "/nodes/comfyui-impact-pack/install", 200],
      ["/nodes/{nodeId}/install", "/nodes/comfyui-impact-pack/install?version=8.7.0", 200],
      ["/nodes/{nodeId}/install", "/nodes/COMFYUI-KJNODES/install", 302],
      ["/nodes/{nodeId}/install", "/nodes/comfyui-impact-pack/install?version=latest", 400],
      ["/nodes/{nodeId}/install", "/nodes/banned-pack/install", 403],
      ["/nodes/{nodeId}/install", "/nodes/unversioned-pack/install", 404],
      [
        "/nodes/{nodeId}/versions",
        "/nodes/comfyui-impact-pack/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending",
        200,
      ],
      ["/nodes/{nodeId}/versions", "/nodes/comfyui-impact-pack/versions?statuses=nope", 400],
      ["/nodes/{nodeId}/versions", "/nodes/banned-pack/versions", 403],
      ["/nodes/{nodeId}/versions", "/nodes/no-such-pack/versions", 404],
      ["/nodes/{nodeId}/versions/{version}", "/nodes/comfyui-impact-pack/versions/8.8.1", 200],
      ["/nodes/{nodeId}/versions/{version}", "/nodes/comfyui-impact-pack/versions/9.9.9", 404],
      ["/nodes/{nodeId}/versions/{version}", "/nodes/banned-pack/versions/1.0.0", 403],
      ["/nodes/{nodeId}/versions/{version}/comfy-nodes", "/nodes/comfyui-impact-pack/versions/8.8.1/comfy-nodes?limit=2", 200],
      ["/nodes/{nodeId}/versions/{version}/comfy-nodes", "/nodes/banned-pack/versions/latest/comfy-nodes", 403],
      ["/archives/{nodeId}/{version}/node.zip", "/archives/comfyui-impact-pack/8.9.0/node.zip", 403],
      ["/archives/{nodeId}/{version}/node.zip", "/archives/banned-pack/1.0.0/node.zip", 403],
      ["/archives/{nodeId}/{version}/node.zip", "/archives/comfyui-impact-pack/0.0.1/node.zip", 404],
      ["/archives/{nodeId}/{version}/node.zip", "/archives/COMFYUI-KJNODES/1.0.9/node.zip", 302],
      ["/versions", "/versions?pageSize=5", 200],
      ["/versions", "/versions?pageSize=500", 400],
      ["/versions", "/versions?nodeId=banned-pack", 403],
      ["/comfy-nodes/{comfyNodeName}/node", "/comfy-nodes/SAMLoader/node", 200],
      ["/comfy-nodes/{comfyNodeName}/node", "/comfy-nodes/NoSuchClass/node", 404],
      ["/publishers/{publisherId}", "/publishers/ltdrdata", 200],
      ["/publishers/{publisherId}", "/publishers/nobody", 404],
      ["/publishers/{publisherId}/nodes", "/publishers/ltdrdata/nodes", 200],
      ["/publishers/{publisherId}/nodes", "/publishers/ltdrdata/nodes?include_banned=x", 400],
      ["/nodes", "/nodes?node_id=comfyui-impact-pack&node_id=legacy-pack", 200],
      ["/nodes", "/nodes?sort=downloads", 400],
      ["/channel/custom-node-list.json", "/channel/custom-node-list.json", 200],
      ["/channel/extension-node-map.json", "/channel/extension-node-map.json", 200],
      ["/channel/github-stats.json", "/channel/github-stats.json", 200],
      ["/channel/model-list.json", "/channel/model-list.json", 200],
      ["/channel/alter-list.json", "/channel/alter-list.json", 200],
      ["/channel/extras.json", "/channel/extras.json", 200],
    ];
    for (const [path, url, status] of cases) expectConforms(path, "get", await request(app).get(url).expect(status));
    const bulk = "/bulk/nodes/versions";
    expectConforms(
      bulk,
      "post",
      await request(app)
        .post(bulk)
        .send({
          node_versions: [
            { node_id: "comfyui-impact-pack", version: "8.8.1" },
            { node_id: "x", version: "1.0.0" },
          ],
        })
        .expect(200),
    );
    expectConforms(bulk, "post", await request(app).post(bulk).set("content-type", "application/json").send("{nope").expect(400));
    expectConforms(
      bulk,
      "post",
      await request(app)
        .post(bulk)
        .send({ node_versions: [{ node_id: "x".repeat(300_000), version: "1" }] })
        .expect(413),
    );
  });

  it("upload routes, with and without /api: results and errors", async () => {
    const png = await solidPng(8, 6, { r: 10, g: 20, b: 30 });
    const mask = await solidPng(8, 6, { r: 0, g: 0, b: 0, alpha: 0 });
    for (const prefix of ["/api", ""]) {
      const path = `${prefix}/upload/image`;
      const ok = await keyedClient(app, KEY).post(path).attach("image", png, "cat.png").field("subfolder", "clipspace").expect(200);
      imageName = ok.body.name;
      expectConforms(path, "post", ok);
      expectConforms(path, "post", await request(app).post(path).attach("image", png, "cat.png").expect(401));
      expectConforms(path, "post", await keyedClient(app, KEY).post(path).field("type", "input").expect(400));
      expectConforms(
        path,
        "post",
        await keyedClient(app, KEY).post(path).attach("image", Buffer.from("not an image"), "x.png").expect(400),
      );

      const maskPath = `${prefix}/upload/mask`;
      const ref = JSON.stringify({ filename: imageName, subfolder: "clipspace", type: "input" });
      const masked = await request(app)
        .post(maskPath)
        .set("authorization", `Bearer ${KEY}`)
        .attach("image", mask, "clipspace-mask-1.png")
        .field("original_ref", ref)
        .expect(200);
      expect(masked.body.metadata.mask_type).toBe("alpha");
      expectConforms(maskPath, "post", masked);
      const unknown = JSON.stringify({ filename: `${"0".repeat(64)}.png` });
      expectConforms(
        maskPath,
        "post",
        await keyedClient(app, KEY).post(maskPath).attach("image", mask, "m.png").field("original_ref", unknown).expect(404),
      );
      expectConforms(
        maskPath,
        "post",
        await keyedClient(app, KEY).post(maskPath).attach("image", mask, "m.png").field("original_ref", "{not json").expect(400),
      );

      const viewPath = `${prefix}/view`;
      const view = await keyedClient(app, KEY).get(`${viewPath}?filename=${imageName}`).expect(200);
      expect(Buffer.compare(view.body as Buffer, png)).toBe(0);
      expectConforms(viewPath, "get", view);
      expectConforms(
        viewPath,
        "get",
        await keyedClient(app, KEY).get(`${viewPath}?filename=${imageName}`).set("range", "bytes=0-3").expect(206),
      );
      expectConforms(
        viewPath,
        "get",
        await keyedClient(app, KEY)
          .get(`${viewPath}?filename=${"f".repeat(64)}.png`)
          .expect(404),
      );
      expectConforms(viewPath, "get", await request(app).get(`${viewPath}?filename=${imageName}`).expect(401));
    }
  });

  it("asset routes, with and without /api: results and errors", async () => {
    const png = await solidPng(7, 3, { r: 1, g: 2, b: 3 });
    const up = await keyedClient(app, KEY).post("/api/upload/image").attach("image", png, "a.png").field("type", "input").expect(200);
    const hash = `blake3:${(up.body.name as string).slice(0, 64)}`;
    const unknownId = "00000000-0000-4000-8000-000000000000";
    for (const prefix of ["/api", ""]) {
      const k = (r: request.Test) => r.set("x-api-key", KEY);
      expectConforms(`${prefix}/assets/hash/{hash}`, "head", await k(request(app).head(`${prefix}/assets/hash/${hash}`)).expect(200));
      expectConforms(
        `${prefix}/assets/hash/{hash}`,
        "head",
        await k(request(app).head(`${prefix}/assets/hash/blake3:${"0".repeat(64)}`)).expect(404),
      );
      expectConforms(`${prefix}/assets/hash/{hash}`, "head", await k(request(app).head(`${prefix}/assets/hash/nope`)).expect(400));
      expectConforms(`${prefix}/assets/hash/{hash}`, "head", await request(app).head(`${prefix}/assets/hash/${hash}`).expect(401));

      const created = await k(
        request(app)
          .post(`${prefix}/assets/from-hash`)
          .send({ hash, name: "x.png", tags: ["a", "b"], user_metadata: { k: 1 } }),
      ).expect(201);
      expectConforms(`${prefix}/assets/from-hash`, "post", created);
      expectConforms(
        `${prefix}/assets/from-hash`,
        "post",
        await k(
          request(app)
            .post(`${prefix}/assets/from-hash`)
            .send({ hash: `blake3:${"0".repeat(64)}` }),
        ).expect(404),
      );
      expectConforms(
        `${prefix}/assets/from-hash`,
        "post",
        await k(request(app).post(`${prefix}/assets/from-hash`).send({ hash: 1 })).expect(400),
      );
      expectConforms(
        `${prefix}/assets/from-hash`,
        "post",
        await request(app).post(`${prefix}/assets/from-hash`).send({ hash }).expect(401),
      );
      const id = created.body.id as string;

      const page = await k(request(app).get(`${prefix}/assets?include_tags=a&limit=1`)).expect(200);
      expectConforms(`${prefix}/assets`, "get", page);
      expectConforms(
        `${prefix}/assets`,
        "get",
        await k(request(app).get(`${prefix}/assets?limit=1&after=${page.body.next_cursor ?? "x"}`)).expect(
          page.body.next_cursor ? 200 : 400,
        ),
      );
      expectConforms(`${prefix}/assets`, "get", await k(request(app).get(`${prefix}/assets?limit=501`)).expect(400));

      expectConforms(`${prefix}/assets/{id}`, "get", await k(request(app).get(`${prefix}/assets/${id}`)).expect(200));
      expectConforms(`${prefix}/assets/{id}`, "get", await k(request(app).get(`${prefix}/assets/${unknownId}`)).expect(404));
      expectConforms(
        `${prefix}/assets/{id}`,
        "put",
        await k(
          request(app)
            .put(`${prefix}/assets/${id}`)
            .send({ name: "y.png", tags: ["c"] }),
        ).expect(200),
      );
      expectConforms(
        `${prefix}/assets/{id}`,
        "put",
        await k(
          request(app)
            .put(`${prefix}/assets/${id}`)
            .send({ tags: [1] }),
        ).expect(400),
      );
      expectConforms(`${prefix}/assets/{id}/content`, "get", await k(request(app).get(`${prefix}/assets/${id}/content`)).expect(200));
      expectConforms(
        `${prefix}/assets/{id}/content`,
        "get",
        await k(request(app).get(`${prefix}/assets/${id}/content`).set("range", "bytes=0-1")).expect(206),
      );
      expectConforms(
        `${prefix}/assets/{id}/content`,
        "get",
        await k(request(app).get(`${prefix}/assets/${unknownId}/content`)).expect(404),
      );
      expectConforms(
        `${prefix}/assets/{id}/tags`,
        "post",
        await k(
          request(app)
            .post(`${prefix}/assets/${id}/tags`)
            .send({ tags: ["d"] }),
        ).expect(200),
      );
      expectConforms(
        `${prefix}/assets/{id}/tags`,
        "delete",
        await k(
          request(app)
            .delete(`${prefix}/assets/${id}/tags`)
            .send({ tags: ["d", "e"] }),
        ).expect(200),
      );
      expectConforms(
        `${prefix}/assets/{id}/tags`,
        "post",
        await k(request(app).post(`${prefix}/assets/${id}/tags`).set("content-type", "application/json").send("{")).expect(400),
      );
      expectConforms(`${prefix}/tags`, "get", await k(request(app).get(`${prefix}/tags?order=name_asc`)).expect(200));
      expectConforms(`${prefix}/tags`, "get", await k(request(app).get(`${prefix}/tags?limit=0`)).expect(400));
      expectConforms(`${prefix}/assets/{id}`, "delete", await k(request(app).delete(`${prefix}/assets/${id}`)).expect(204));
      expectConforms(`${prefix}/assets/{id}`, "delete", await k(request(app).delete(`${prefix}/assets/${id}`)).expect(404));
    }
  });

  it("operations routes", async () => {
    expectConforms("/healthz", "get", await request(app).get("/healthz").expect(200));
    expectConforms("/readyz", "get", await request(app).get("/readyz").expect(200));
  });
});

describe("429 answers what /openapi.json declares", () => {
  it("a key over its limits on the upload, view and asset routes: rate_limited with Retry-After", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-openapi-429-"));
    const config = loadConfig({
      DATA_DIR: dataDir,
      API_KEYS: KEY,
      LOG_LEVEL: "silent",
      RATE_LIMIT_UPLOAD_RPM: "1",
      RATE_LIMIT_ASSETS_RPM: "1",
    });
    const logger = createLogger("gw-openapi-429", "silent");
    const composed = await composeGateway(config, logger);
    try {
      const app = createGatewayApp({ services: composed.services, logger });
      const png = await solidPng(4, 4, { r: 1, g: 2, b: 3 });
      await keyedClient(app, KEY).post("/api/upload/image").attach("image", png, "a.png").expect(200);
      const upload = await keyedClient(app, KEY).post("/upload/image").attach("image", png, "a.png").expect(429);
      expect(upload.headers["retry-after"]).toMatch(/^\d+$/);
      expectConforms("/upload/image", "post", upload);
      await keyedClient(app, KEY)
        .get(`/view?filename=${"f".repeat(64)}.png`)
        .expect(404);
      const view = await keyedClient(app, KEY)
        .get(`/api/view?filename=${"f".repeat(64)}.png`)
        .expect(429);
      expectConforms("/api/view", "get", view);
      // The asset API counts in the same class as /view: that key's minute is spent there too.
      const head = await keyedClient(app, KEY)
        .head(`/api/assets/hash/blake3:${"f".repeat(64)}`)
        .expect(429);
      expect(head.headers["retry-after"]).toMatch(/^\d+$/);
      expectConforms("/api/assets/hash/{hash}", "head", head);
      expectConforms("/api/assets", "get", await keyedClient(app, KEY).get("/api/assets").expect(429));
      expectConforms(
        "/assets/from-hash",
        "post",
        await keyedClient(app, KEY)
          .post("/assets/from-hash")
          .send({ hash: `blake3:${"f".repeat(64)}` })
          .expect(429),
      );
      expectConforms("/api/tags", "get", await keyedClient(app, KEY).get("/api/tags").expect(429));
    } finally {
      for (const c of composed.closables) await c.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
