import express from "express";
import type { RequestListener } from "node:http";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@app/platform";
import { createGatewayApp } from "../src/app.ts";
import { openApiRouter } from "../src/openapi-route.ts";
import type { GatewayService } from "../src/service-mount.ts";
import { serveOn } from "./web-support.ts";

/**
 * The page's routes beside the API: index.html for `/` and `/ui/...` (never cached), hashed
 * assets cached forever, and every API path, probe and unknown path answering as before.
 * A hand-made dist folder stands in for the build, so these cases need no bundler.
 */
const logger = createLogger("t", "silent");
let dist: string;
const INDEX = `<!doctype html><title>t</title><script type="module" src="/ui/assets/main-ABC123.js"></script>`;

beforeAll(() => {
  dist = mkdtempSync(join(tmpdir(), "web-dist-"));
  mkdirSync(join(dist, "assets"));
  writeFileSync(join(dist, "index.html"), INDEX);
  writeFileSync(join(dist, "assets", "main-ABC123.js"), "console.log(1)");
});
afterAll(() => rmSync(dist, { recursive: true, force: true }));

/** A stand-in search service, mounted in process or behind the proxy, answering JSON at /nodes. */
function nodesRouter() {
  const r = express.Router();
  r.get("/nodes/search", (_req, res) => void res.json({ nodes: [], page: 1, limit: 10, total: 0, totalPages: 0 }));
  r.get("/nodes/:id", (req, res) => void res.status(404).json({ error: "not_found", message: `no node with id "${req.params.id}"` }));
  return r;
}
const embedded = (): GatewayService[] => [
  {
    name: "search",
    paths: ["/nodes"],
    mount: { kind: "embedded", router: nodesRouter(), isReady: () => true },
    unavailableBody: (m) => ({ error: "x", message: m }),
  },
];

describe.each(["embedded", "proxy"] as const)("the web page beside the API (%s search)", (mode) => {
  let app: RequestListener;
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    let services = embedded();
    if (mode === "proxy") {
      const upstream = await serveOn(express().use(nodesRouter()));
      stop = upstream.close;
      services = [
        {
          name: "search",
          paths: ["/nodes"],
          mount: { kind: "proxy", url: upstream.url },
          unavailableBody: (m) => ({ error: "x", message: m }),
        },
      ];
    }
    app = createGatewayApp({ services, logger, extraRoutes: openApiRouter(), webRoot: dist });
  });
  afterAll(() => stop());

  it.each([
    "/",
    "/ui/nodes/comfyui-impact-pack",
    "/ui/nodes/a%2Fb",
    "/ui/clients",
    "/ui/upload",
    "/ui/mask?name=x.png",
    "/ui/gallery",
    "/ui",
  ])("%s answers index.html, never cached", async (path) => {
    const res = await request(app).get(path).expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.headers["cache-control"]).toBe("no-cache");
    expect(res.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(res.text).toBe(INDEX);
  });

  it("hashed assets are cached for a year, immutable", async () => {
    const res = await request(app).get("/ui/assets/main-ABC123.js").expect(200);
    expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(res.headers["content-type"]).toMatch(/javascript/);
  });

  it.each([
    "/ui/assets/missing-XYZ.js",
    "/ui/assets/",
    "/ui/assets/..%2Findex.html",
    "/assets/main-ABC123.js",
    "/nope",
    "/uix",
    "/ui-nodes/x",
  ])("%s is a 404 in the {error, message} shape", async (path) => {
    const res = await request(app).get(path).expect(404);
    expect(res.headers["content-type"]).toMatch(/json/);
    expect(res.body).toEqual({ error: "not_found", message: expect.any(String) });
  });

  it("the API, the document and the probes still answer JSON", async () => {
    expect((await request(app).get("/nodes/search").expect(200)).body).toEqual({ nodes: [], page: 1, limit: 10, total: 0, totalPages: 0 });
    expect((await request(app).get("/nodes/comfyui-impact-pack").expect(404)).body.error).toBe("not_found");
    expect((await request(app).get("/openapi.json").expect(200)).body.openapi).toBe("3.1.0");
    expect((await request(app).get("/healthz").expect(200)).body).toEqual({ status: "ok" });
  });
});

describe("a gateway whose page is not built", () => {
  const app = createGatewayApp({ services: [], logger, webRoot: join(tmpdir(), "no-such-web-dist") });
  it("/ tells a browser how to build it, and a JSON client in its shape", async () => {
    const page = await request(app).get("/").set("Accept", "text/html").expect(404);
    expect(page.text).toContain("pnpm --filter @app/web build");
    const json = await request(app).get("/ui/upload").set("Accept", "application/json").expect(404);
    expect(json.body).toEqual({ error: "not_found", message: expect.stringContaining("pnpm --filter @app/web build") });
  });
});
