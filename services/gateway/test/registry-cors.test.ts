import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import { createSearchApp, createSearchService } from "@app/search";
import { startChromium } from "@app/testkit/chromium";
import { VERSIONED_CATALOG } from "@app/testkit/registry-versions-catalog";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import { serveOn } from "./web-support.ts";

/**
 * CORS as the public registry sends it (registry-backend server/server.go at 8b82dfe, echo
 * v4.11.4's CORS middleware: any origin echoed, credentials, `*` methods and headers, every
 * OPTIONS a 204), on every registry route, through the gateway with search mounted in process
 * and with search proxied (SEARCH_URL) to the standalone search service; and a real browser
 * calling the gateway from another origin as the ComfyUI frontend does.
 */
const ORIGIN = "http://127.0.0.1:8188";
let dataDir: string;
const closables: Closable[] = [];
const servers: Array<() => Promise<void>> = [];
const gateways: Record<"embedded" | "proxied", string> = { embedded: "", proxied: "" };

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "registry-cors-"));
  const catalog = join(dataDir, "catalog.ndjson");
  await writeFile(catalog, VERSIONED_CATALOG.map((r) => JSON.stringify(r)).join("\n"));
  const logger = createLogger("registry-cors", "silent");

  const embedded = await composeGateway(
    loadConfig({ DATA_DIR: join(dataDir, "embedded"), CATALOG_SOURCE: catalog, API_KEYS: "k", LOG_LEVEL: "silent" }),
    logger,
  );
  closables.push(...embedded.closables);
  const e = await serveOn(createGatewayApp({ services: embedded.services, logger }));
  gateways.embedded = e.url;
  servers.push(e.close);

  const search = await createSearchService(
    loadConfig({ DATA_DIR: join(dataDir, "search"), CATALOG_SOURCE: catalog, LOG_LEVEL: "silent" }),
    logger,
  );
  closables.push(search);
  const s = await serveOn(createSearchApp(search, logger));
  servers.push(s.close);
  const proxied = await composeGateway(
    loadConfig({ DATA_DIR: join(dataDir, "proxied"), SEARCH_URL: s.url, API_KEYS: "k", LOG_LEVEL: "silent" }),
    logger,
  );
  closables.push(...proxied.closables);
  const p = await serveOn(createGatewayApp({ services: proxied.services, logger }));
  gateways.proxied = p.url;
  servers.push(p.close);

  for (const url of [gateways.embedded, s.url])
    while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 50));
}, 60_000);

afterAll(async () => {
  for (const close of servers.reverse()) await close();
  for (const c of closables) await c.close();
  await rm(dataDir, { recursive: true, force: true });
});

const varyOf = (res: Response) => (res.headers.get("vary") ?? "").split(",").map((v) => v.trim().toLowerCase());

const REGISTRY_READS = [
  "/nodes/search?search=impact", // answered ahead of Express
  "/nodes?page=1&limit=5",
  "/nodes/comfyui-impact-pack",
  "/nodes/comfyui-impact-pack/install",
  "/nodes/comfyui-impact-pack/versions",
  "/nodes/comfyui-impact-pack/versions/latest/comfy-nodes?limit=256",
  "/versions?pageSize=3",
  "/comfy-nodes/SAMLoader/node",
  "/publishers/ltdrdata/nodes",
  "/nodes/no-such-pack", // an error the browser must be allowed to read
  "/nodes/banned-pack",
  "/channel/extension-node-map.json",
  "/archives/no-such-pack/1.0.0/node.zip", // the archives, h24a's route, under the same CORS
];

describe.each(["embedded", "proxied"] as const)("through the gateway, search %s", (mode) => {
  const base = () => gateways[mode];

  it.each(REGISTRY_READS)("GET %s from another origin: that origin allowed, with credentials, Vary: Origin", async (path) => {
    const res = await fetch(`${base()}${path}`, { headers: { origin: ORIGIN } });
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(res.headers.get("access-control-allow-credentials")).toBe("true");
    expect(varyOf(res)).toContain("origin");
    // echo sends no Expose-Headers unless configured; the registry configures none.
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
  });

  it("GET without Origin: no Access-Control-Allow-Origin, still Vary: Origin (the answer depends on it)", async () => {
    const res = await fetch(`${base()}/nodes/comfyui-impact-pack`);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(varyOf(res)).toContain("origin");
  });

  it("the JSON POST /bulk/nodes/versions: its preflight answers 204 allowing the method and headers, then the POST carries the origin", async () => {
    const preflight = await fetch(`${base()}/bulk/nodes/versions`, {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(await preflight.text()).toBe("");
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(preflight.headers.get("access-control-allow-credentials")).toBe("true");
    expect(preflight.headers.get("access-control-allow-methods")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("*");
    expect(preflight.headers.get("access-control-max-age")).toBeNull();
    expect(varyOf(preflight)).toEqual(
      expect.arrayContaining(["origin", "access-control-request-method", "access-control-request-headers"]),
    );

    const post = await fetch(`${base()}/bulk/nodes/versions`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json" },
      body: JSON.stringify({ node_versions: [{ node_id: "comfyui-impact-pack", version: "8.8.1" }] }),
    });
    expect(post.status).toBe(200);
    expect(post.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect((await post.json()).node_versions[0].status).toBe("success");
  });

  it.each([
    "/nodes/comfyui-impact-pack",
    "/nodes/search",
    "/versions",
    "/nodes/no-such-pack/install",
    "/archives/comfyui-impact-pack/8.8.1/node.zip",
  ])("a preflight for GET %s answers 204 without reaching the route", async (path) => {
    const res = await fetch(`${base()}${path}`, { method: "OPTIONS", headers: { origin: ORIGIN, "access-control-request-method": "GET" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(res.headers.get("access-control-allow-methods")).toBe("*");
  });

  it("OPTIONS without Origin: 204 and no Allow-Origin, as echo answers it", async () => {
    const res = await fetch(`${base()}/nodes/comfyui-impact-pack`, { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-allow-methods")).toBeNull();
  });

  it("the upload face is not the registry's: no CORS there", async () => {
    const res = await fetch(`${base()}/api/view?filename=x.png`, { headers: { origin: ORIGIN } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("through a gateway whose search service is down", () => {
  it("its 502 carries the registry's CORS too, so the frontend can read why; its preflights still pass", async () => {
    const logger = createLogger("registry-cors-down", "silent");
    const gone = await serveOn((_req, res) => res.end());
    await gone.close(); // a port nothing listens on any more
    const composed = await composeGateway(
      loadConfig({ DATA_DIR: join(dataDir, "down"), SEARCH_URL: gone.url, API_KEYS: "k", LOG_LEVEL: "silent" }),
      logger,
    );
    closables.push(...composed.closables);
    const g = await serveOn(createGatewayApp({ services: composed.services, logger }));
    servers.push(g.close);
    const res = await fetch(`${g.url}/nodes/comfyui-impact-pack`, { headers: { origin: ORIGIN } });
    expect(res.status).toBe(502);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect((await res.json()).error).toBe("service_unavailable");
    const preflight = await fetch(`${g.url}/bulk/nodes/versions`, {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("*");
  });
});

const chromium = await startChromium();
if (!chromium.ok) console.log(`browser CORS test skipped: ${chromium.reason}`);

describe.skipIf(!chromium.ok)("a browser page on another origin (the ComfyUI frontend's case)", () => {
  afterAll(async () => {
    if (chromium.ok) await chromium.close();
  });

  it("reads a GET, an error and the JSON bulk POST (after its preflight) from the gateway, in both modes", async () => {
    if (!chromium.ok) throw new Error("the suite runs only with chromium");
    const page = await serveOn((_req, res) =>
      res.writeHead(200, { "content-type": "text/html", connection: "close" }).end("<!doctype html><title>ComfyUI</title>"),
    );
    const tab = await chromium.browser.newPage();
    try {
      await tab.goto(page.url);
      for (const base of Object.values(gateways)) {
        const seen = await tab.evaluate(async (b: string) => {
          const node = await fetch(`${b}/nodes/comfyui-impact-pack`).then((r) => r.json());
          const missing = await fetch(`${b}/nodes/no-such-pack`).then(async (r) => [r.status, (await r.json()).error]);
          const bulk = await fetch(`${b}/bulk/nodes/versions`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ node_versions: [{ node_id: "comfyui-impact-pack", version: "8.8.1" }] }),
          }).then((r) => r.json());
          return { id: node.id, missing, bulk: bulk.node_versions[0].status };
        }, base);
        expect(seen, base).toEqual({ id: "comfyui-impact-pack", missing: [404, "not_found"], bulk: "success" });
      }
    } finally {
      await tab.close();
      await page.close();
    }
  }, 60_000);
});
