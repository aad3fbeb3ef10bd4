import { Validator } from "@seriousme/openapi-schema-validator";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createLogger } from "@app/platform";
import { createGatewayApp } from "../src/app.ts";
import { openApiRouter } from "../src/openapi-route.ts";

describe("GET /openapi.json", () => {
  const app = createGatewayApp({ logger: createLogger("t", "silent"), services: [], extraRoutes: openApiRouter() });

  it("serves a valid OpenAPI 3.1 document with registry version 1.0 and every public route", async () => {
    const res = await request(app).get("/openapi.json").expect(200).expect("content-type", /json/);
    const doc = res.body;
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0");
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/api/upload/image",
        "/api/upload/mask",
        "/api/view",
        "/healthz",
        "/nodes",
        "/nodes/search",
        "/nodes/{nodeId}",
        "/nodes/{nodeId}/versions/{version}/comfy-nodes",
        "/nodes/{nodeId}/install",
        "/nodes/{nodeId}/versions",
        "/nodes/{nodeId}/versions/{version}",
        "/archives/{nodeId}/{version}/node.zip",
        "/versions",
        "/bulk/nodes/versions",
        "/comfy-nodes/{comfyNodeName}/node",
        "/publishers/{publisherId}",
        "/publishers/{publisherId}/nodes",
        ...["custom-node-list", "extension-node-map", "github-stats", "model-list", "alter-list", "extras"].map(
          (f) => `/channel/${f}.json`,
        ),
        "/readyz",
        "/upload/image",
        "/upload/mask",
        "/view",
        ...[
          "/assets",
          "/assets/from-hash",
          "/assets/hash/{hash}",
          "/assets/uploads",
          "/assets/uploads/{uploadId}",
          "/assets/prune",
          "/assets/seed",
          "/assets/tags/refine",
          "/assets/{id}",
          "/assets/{id}/content",
          "/assets/{id}/tags",
          "/tags",
        ].flatMap((p) => [`/api${p}`, p]),
      ].sort(),
    );
    const search = doc.paths["/nodes/search"].get;
    expect(search.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        "page",
        "limit",
        "search",
        "repository_url_search",
        "app_node_search",
        "comfy_node_search",
        "supported_os",
        "supported_accelerator",
        "include_banned",
        "node_id",
      ]),
    );
    expect(doc.components.schemas.ErrorResponse.required).toEqual(["error", "message"]);
  });
});
