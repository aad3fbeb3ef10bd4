import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyPng } from "@app/testkit/png";
import { freePort, SCRIPTS, startService, type Service } from "@app/testkit/processes";

/**
 * The search service (its own process, proxied by the gateway through SEARCH_URL) goes away:
 * search answers 502/503 in the registry's `{error, message}` shape, the upload face mounted in
 * the gateway keeps working, the gateway stays ready (reporting `search: false`), and search comes
 * back by itself when the service does.
 */
const KEY = "rel-search-down-key-0123456789";
let dir: string;
let searchPort: number;
let search: Service | undefined;
let gw: Service;
let catalog: string;

const startSearch = () => startService(SCRIPTS.search, { DATA_DIR: join(dir, "search"), CATALOG_SOURCE: catalog }, { port: searchPort });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rel-search-down-"));
  catalog = join(dir, "catalog.ndjson");
  await writeFile(
    catalog,
    ["alpha", "beta", "gamma"].map((id) => JSON.stringify({ id, name: `Pack ${id}`, status: "NodeStatusActive" })).join("\n"),
  );
  searchPort = await freePort();
  search = await startSearch();
  gw = await startService(SCRIPTS.gateway, { DATA_DIR: join(dir, "gw"), API_KEYS: KEY, SEARCH_URL: search.url });
});
afterAll(async () => {
  await gw?.stop();
  await search?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(gw.url + path, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function uploadOk(seed: number): Promise<void> {
  const form = new FormData();
  form.set("image", new Blob([new Uint8Array(tinyPng(seed))], { type: "image/png" }), "a.png");
  const res = await fetch(`${gw.url}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": KEY } });
  const body = (await res.json()) as { name: string };
  expect(res.status).toBe(200);
  const read = await fetch(`${gw.url}/api/view?filename=${body.name}`, { headers: { "X-API-Key": KEY } });
  expect(read.status).toBe(200);
  expect(Buffer.from(await read.arrayBuffer()).equals(tinyPng(seed))).toBe(true);
}

describe("the search service down behind the gateway", () => {
  it("answers while the service is up", async () => {
    const r = await get("/nodes/search?search=pack");
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(3);
  });

  it("killed: 502/503 {error, message} on every search route, uploads unaffected, readiness says which", async () => {
    await search!.kill("SIGKILL");
    for (const path of ["/nodes/search?search=pack", "/nodes?page=2", "/nodes/alpha", "/nodes/search?limit=abc"]) {
      for (let i = 0; i < 5; i++) {
        const r = await get(path);
        expect([502, 503], path).toContain(r.status);
        expect(typeof r.body.error, path).toBe("string");
        expect(typeof r.body.message, path).toBe("string");
        expect(r.body.message).toMatch(/search/);
      }
    }
    for (let i = 0; i < 10; i++) await uploadOk(1000 + i);
    // The gateway stays in rotation (its readiness is its own) and says which service is down.
    const ready = await get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready", ready: true, services: { search: false, upload: true } });
    await uploadOk(1100);
    // The gateway itself stays up.
    expect((await get("/healthz")).status).toBe(200);
  });

  it("comes back without a gateway restart once the service does", async () => {
    search = await startSearch();
    const r = await get("/nodes/search?search=pack");
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(3);
    expect(await get("/readyz")).toEqual({ status: 200, body: { status: "ready", ready: true, services: { search: true, upload: true } } });
    await uploadOk(2000);
  });
});
