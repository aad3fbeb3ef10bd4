import request from "supertest";
import { describe, expect, it } from "vitest";
import { ComfyNodesPage } from "@app/contracts";
import { generateCatalog, type RegistryNode } from "@app/testkit/catalog";
import { comfyNodeDefinition } from "@app/testkit/fake-registry-lists";
import { waitUntil } from "@app/testkit/processes";
import { createApp } from "../src/app.ts";
import type { SearchRuntime } from "../src/compose.ts";
import { mirrorHarness } from "./helpers.ts";

/**
 * A first mirror takes every pack's versions from the registry's list of every version
 * (`GET /versions`, 100 a page) instead of one request a pack, and falls back to asking each
 * pack when that route fails; the result is the same catalog either way.
 */
const NODES: RegistryNode[] = [
  ...generateCatalog({ seed: 24, nodes: 240 }),
  {
    id: "many-versions",
    name: "Many Versions",
    status: "NodeStatusActive",
    publisher: { id: "many", name: "Many" },
    // Ties in the version text with other packs' 1.0.0 and 1.1.0, and a deleted newest one.
    versions: [
      { version: "2.0.0", status: "NodeVersionStatusDeleted", createdAt: "2024-09-01T00:00:00Z" },
      { version: "1.1.0", status: "NodeVersionStatusActive", createdAt: "2024-06-01T00:00:00Z", classes: ["ManyElevenClass"] },
      { version: "1.0.0", status: "NodeVersionStatusActive", createdAt: "2024-03-01T00:00:00Z", classes: ["ManyTenClass"] },
    ],
  },
];
const harness = mirrorHarness("search-bulk", { pageSize: 50, retryDelayMs: 10, headersTimeoutMs: 30_000, attempts: 2 });
const mirrored = async (d: SearchRuntime) =>
  waitUntil(() => d.catalogStatus().mirror?.phase === "done" && d.catalogStatus().state === "fresh", "the first mirror pass", {
    tries: 1200,
  });
const readable = NODES.filter((n) => n.status !== "NodeStatusBanned" && n.status !== "NodeStatusDeleted");

/** What the mirror holds of each readable pack's versions, and what upstream has. */
async function versionsHeld(d: SearchRuntime): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const n of readable)
    out[n.id] = ((await d.engine.get(n.id, { includeBanned: false }))?.versions ?? []).map((v) => `${v.version}:${v.status}`);
  return out;
}

describe("a first mirror's versions", () => {
  it("come from the list of every version, a page per 100 versions, with no per-pack version request, and equal upstream's", async () => {
    const r = await harness.registry(NODES);
    const d = await harness.deps({ DATA_DIR: harness.path("bulk"), CATALOG_SOURCE: r.url, CATALOG_REFRESH: "off" });
    await mirrored(d);
    const total = NODES.reduce((n, p) => n + r.versions(p.id).length, 0);
    expect(r.requests(/^\/versions$/)).toHaveLength(Math.ceil(total / 100));
    expect(r.requests(/^\/nodes\/[^/]+\/versions$/)).toHaveLength(0);
    const upstream = Object.fromEntries(readable.map((n) => [n.id, r.versions(n.id).map((v) => `${v.version}:${v.status}`)]));
    expect(await versionsHeld(d)).toEqual(upstream);
    // The install path over them: 1.1.0 (2.0.0 is deleted), with its classes.
    const install = await request(createApp(d)).get("/nodes/many-versions/install").expect(200);
    expect(install.body.version).toBe("1.1.0");
    expect((await request(createApp(d)).get("/comfy-nodes/ManyElevenClass/node").expect(200)).body.id).toBe("many-versions");
  });

  it("keep each class's whole definition (sockets, category, entry point, policy) as the registry answers it", async () => {
    const r = await harness.registry(NODES);
    const d = await harness.deps({ DATA_DIR: harness.path("definitions"), CATALOG_SOURCE: r.url, CATALOG_REFRESH: "off" });
    await mirrored(d);
    const page = ComfyNodesPage.strict().parse(
      (await request(createApp(d)).get("/nodes/many-versions/versions/1.1.0/comfy-nodes").expect(200)).body,
    );
    expect(page.comfy_nodes).toEqual([comfyNodeDefinition("ManyElevenClass")]);
    expect(Object.keys(page.comfy_nodes[0]!).sort()).toEqual([
      "category",
      "comfy_node_name",
      "deprecated",
      "description",
      "experimental",
      "function",
      "input_types",
      "output_is_list",
      "policy",
      "return_names",
      "return_types",
    ]);
    // Every pack with classes: the definitions upstream gives for its install-path version.
    for (const n of readable.slice(0, 40)) {
      const install = r.installVersion(n.id);
      if (!install?.classes?.length) continue;
      const got = (await request(createApp(d)).get(`/nodes/${n.id}/versions/latest/comfy-nodes?limit=1000`).expect(200)).body.comfy_nodes;
      expect(got, n.id).toEqual([...new Set(install.classes)].map((c) => comfyNodeDefinition(c)));
    }
  });

  it("come from each pack, as before, when the registry's list of every version fails", async () => {
    const r = await harness.registry(NODES);
    r.fault(/^\/versions$/, "500", 1_000);
    const d = await harness.deps({ DATA_DIR: harness.path("fallback"), CATALOG_SOURCE: r.url, CATALOG_REFRESH: "off" });
    await mirrored(d);
    // Every pack not banned is asked (deleted ones are listed upstream, and asked, then not served).
    expect(r.requests(/^\/nodes\/[^/]+\/versions$/).length).toBe(NODES.filter((n) => n.status !== "NodeStatusBanned").length);
    const upstream = Object.fromEntries(readable.map((n) => [n.id, r.versions(n.id).map((v) => `${v.version}:${v.status}`)]));
    expect(await versionsHeld(d)).toEqual(upstream);
  });

  it("another version's classes are read through on the first request and kept: again without asking, after the registry stops, after a restart", async () => {
    const r = await harness.registry(NODES);
    const dataDir = harness.path("read-through");
    const d = await harness.deps({ DATA_DIR: dataDir, CATALOG_SOURCE: r.url, CATALOG_REFRESH: "off" });
    await mirrored(d);
    const old = "/nodes/many-versions/versions/1.0.0/comfy-nodes";
    const asked = () => r.requests(/^\/nodes\/many-versions\/versions\/1\.0\.0\/comfy-nodes$/).length;
    expect(asked()).toBe(0); // the mirror reads the install path's classes only
    const first = ComfyNodesPage.strict().parse((await request(createApp(d)).get(old).expect(200)).body);
    expect(first).toEqual({ comfy_nodes: [comfyNodeDefinition("ManyTenClass")], totalNumberOfPages: 1 });
    expect((await request(createApp(d)).get(old).expect(200)).body).toEqual(first);
    expect(asked()).toBe(1);
    // An unknown version is a 404, asked of nobody.
    expect((await request(createApp(d)).get("/nodes/many-versions/versions/7.7.7/comfy-nodes").expect(404)).body.error).toBe("not_found");
    const url = r.url;
    await r.stop();
    expect((await request(createApp(d)).get(old).expect(200)).body).toEqual(first);
    // A version never read, with the registry down: 503 naming it, at once.
    const down = await request(createApp(d)).get("/nodes/many-versions/versions/2.0.0/comfy-nodes").expect(503);
    expect(down.body.message).toContain("2.0.0");
    await d.close();
    const restarted = await harness.deps({ DATA_DIR: dataDir, CATALOG_SOURCE: url, CATALOG_REFRESH: "off" });
    await restarted.started;
    expect((await request(createApp(restarted)).get(old).expect(200)).body).toEqual(first);
  });

  it("the fake registry's list routes answer as production's OpenAPI declares them (what the mirror relies on)", async () => {
    const r = await harness.registry(NODES);
    const get = async (path: string) => {
      const res = await fetch(`${r.url}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    expect((await get("/versions?pageSize=101")).status).toBe(400);
    const page = (await get("/versions?page=1&pageSize=100")).body;
    expect(Object.keys(page).sort()).toEqual(["page", "pageSize", "total", "totalPages", "versions"]);
    expect(page.versions).toHaveLength(100);
    // Ordered by the version text, descending.
    const texts = page.versions.map((v: { version: string }) => v.version);
    expect(texts).toEqual([...texts].sort().reverse());
    const many = (await get("/comfy-nodes?node_id=many-versions")).body;
    expect(many).toEqual({ comfy_nodes: [comfyNodeDefinition("ManyElevenClass"), comfyNodeDefinition("ManyTenClass")], total: 2 });
    expect((await get("/comfy-nodes?node_id=many-versions&node_version=1.0.0")).body.total).toBe(1);
  });
});
