import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { generateCatalog, type RegistryNode } from "@app/testkit/catalog";
import { comfyNodeDefinition } from "@app/testkit/fake-registry-lists";
import { waitUntil } from "@app/testkit/processes";
import { createApp } from "../src/app.ts";
import { loadCatalog } from "../src/adapters/catalog-source.ts";
import type { PackListReport } from "../src/adapters/registry/pack-list.ts";
import type { MirrorOptions } from "../src/adapters/registry/mirror-options.ts";
import { loadConfig } from "@app/platform";
import { EmbeddedSearchEngine } from "../src/adapters/embedded/embedded-engine.ts";
import type { SearchEngine } from "../src/ports/search-engine.ts";
import { createSearchRuntime, type SearchRuntime } from "../src/compose.ts";
import { mirrorHarness, silentLogger } from "./helpers.ts";

/**
 * A mirror of a registry that behaves as the public one does (rows that move between
 * page requests, a default that hides banned packs, versions and classes behind per-pack
 * routes) serves every pack, its classes and its install-path version, and keeps in step.
 */
const NODES = generateCatalog({ seed: 18, nodes: 300 });
const mirror = { pageSize: 25, retryDelayMs: 10, headersTimeoutMs: 30_000 };
const harness = mirrorHarness("search-complete", mirror);
const registry = (nodes: RegistryNode[] = NODES) => harness.registry(nodes);
/** A service mirroring `url` that reads only when told (CATALOG_REFRESH=off reads once, at start). */
const deps = (env: Record<string, string>, extra: MirrorOptions = {}) => harness.deps({ CATALOG_REFRESH: "off", ...env }, extra);
const mirrored = async (d: SearchRuntime) =>
  waitUntil(() => d.catalogStatus().mirror?.phase === "done" && d.catalogStatus().state === "fresh", "the first mirror pass", {
    tries: 1200,
  });
const get = (d: SearchRuntime, path: string) => request(createApp(d)).get(path);

/**
 * A pack whose versions tell the list's latest_version (2.0.0, the newest, banned) from the
 * install path's (1.9.0: registry-backend orders the version text, so it comes before 1.10.0).
 */
const PICKY: RegistryNode = {
  id: "picky-pack",
  name: "Picky Pack",
  status: "NodeStatusActive",
  publisher: { id: "picky", name: "Picky" },
  versions: [
    { version: "2.0.0", status: "NodeVersionStatusBanned", createdAt: "2024-06-01T00:00:00Z", classes: ["PickyBannedClass"] },
    { version: "1.10.0", status: "NodeVersionStatusActive", createdAt: "2024-05-01T00:00:00Z", classes: ["PickyTenClass"] },
    { version: "1.9.0", status: "NodeVersionStatusActive", createdAt: "2024-03-01T00:00:00Z", classes: ["PickyNineClass", "PickySampler"] },
  ],
};

describe("a registry whose rows move between page requests", () => {
  it("loses packs to a reader that pages in the registry's own order (what the mirror did before)", async () => {
    const r = await registry();
    r.movesPerListRequest = 1;
    const seen = new Set<string>();
    let total = 0;
    for (let page = 1, pages = 1; page <= pages; page++) {
      const body = (await (await fetch(`${r.url}/nodes?page=${page}&limit=25&include_banned=true&latest=true`)).json()) as {
        nodes: { id: string }[];
        total: number;
        totalPages: number;
      };
      for (const n of body.nodes) seen.add(n.id);
      total = body.total;
      pages = body.totalPages;
    }
    expect(total).toBe(NODES.length);
    expect(seen.size).toBeLessThan(NODES.length);
  });

  it("the mirror pages by id, reads every pack once and none is missing, with three rows moving per request", async () => {
    const r = await registry();
    r.movesPerListRequest = 3;
    const reports: PackListReport[] = [];
    const { records } = await loadCatalog(r.url, { mirror, onListReport: (x) => reports.push(x) });
    expect(new Set(records.map((n) => n.id)).size).toBe(NODES.length);
    expect(reports).toEqual([{ total: NODES.length, distinct: NODES.length, passes: 1, missing: 0, sorted: true }]);
    const lists = r.requests(/^\/nodes$/);
    expect(
      lists.every((q) => q.query.get("sort") === "id" && q.query.get("include_banned") === "true" && q.query.get("latest") === "true"),
    ).toBe(true);
  });

  it("against a registry that ignores sort, reads the list again, and reports what is still missing while serving the packs it knew", async () => {
    const r = await registry();
    const d = await deps({ DATA_DIR: harness.path("unsorted"), CATALOG_SOURCE: r.url }, { rereads: 0 });
    await mirrored(d);
    expect(d.catalogStatus()).toMatchObject({ nodes: NODES.length, missing: null });
    r.honourSort = false;
    r.movesPerListRequest = 3;
    await d.reindex(r.url, { full: true });
    const status = d.catalogStatus();
    expect(status.missing?.count).toBeGreaterThan(0);
    expect(status.missing?.kept.length).toBe(status.missing?.count);
    // Nothing silently lost: the packs the list did not return are still served.
    expect(status.nodes).toBe(NODES.length);
    const ready = await get(d, "/readyz");
    expect(ready.body.catalog.missing).toMatchObject({
      count: status.missing!.count,
      kept: expect.arrayContaining([status.missing!.kept[0]]),
    });

    // With re-reads (the default), the passes together find every pack again.
    const reports: PackListReport[] = [];
    const { records } = await loadCatalog(r.url, { mirror: { ...mirror, rereads: 4 }, onListReport: (x) => reports.push(x) });
    // Each pack once: the rows read twice as they moved are not counted or kept twice.
    expect(records).toHaveLength(NODES.length);
    expect(new Set(records.map((n) => n.id)).size).toBe(NODES.length);
    expect(reports[0]!.passes).toBeGreaterThan(1);
    expect(reports[0]!.missing).toBe(0);
  });
});

describe("banned packs", () => {
  it("are mirrored whatever the registry's default, and served only with include_banned=true", async () => {
    const r = await registry();
    r.defaultIncludeBanned = false;
    const banned = NODES.filter((n) => n.status === "NodeStatusBanned");
    expect(banned.length).toBeGreaterThan(0);
    const d = await deps({ DATA_DIR: harness.path("banned"), CATALOG_SOURCE: r.url });
    await mirrored(d);
    expect(d.catalogStatus().nodes).toBe(NODES.length);
    const id = banned[0]!.id;
    expect((await get(d, `/nodes/${id}`)).status).toBe(403); // "Node Banned", as the registry
    expect((await get(d, `/nodes/${id}?include_banned=true`)).body).toMatchObject({ id, status: "NodeStatusBanned" });
    const plain = await get(d, "/nodes/search?limit=100");
    const all = await get(d, "/nodes/search?limit=100&include_banned=true");
    expect(all.body.total - plain.body.total).toBe(banned.length);
  });
});

describe("classes and versions", () => {
  it("a mirrored catalog answers comfy_node_search with the providing pack, whose latest_version is the install path's, with a download URL", async () => {
    const r = await registry([...NODES, PICKY]);
    const d = await deps({ DATA_DIR: harness.path("classes"), CATALOG_SOURCE: r.url });
    await mirrored(d);
    // The list itself carries no class names and the newest version (banned) without a download URL.
    const listed = (await (await fetch(`${r.url}/nodes/picky-pack`)).json()) as {
      latest_version: { version: string; downloadUrl: string };
    };
    expect(listed.latest_version).toMatchObject({ version: "2.0.0", downloadUrl: "" });

    const found = await get(d, "/nodes/search?comfy_node_search=PickyNineClass");
    expect(found.body.nodes.map((n: { id: string }) => n.id)).toEqual(["picky-pack"]);
    const install = (await (await fetch(`${r.url}/nodes/picky-pack/install`)).json()) as { version: string; downloadUrl: string };
    expect(found.body.nodes[0].latest_version).toMatchObject({ version: install.version, downloadUrl: install.downloadUrl });
    expect(install.version).toBe("1.9.0");
    expect(install.downloadUrl).not.toBe("");
    // Classes of other versions are not the pack's: search does not find them.
    expect((await get(d, "/nodes/search?comfy_node_search=PickyTenClass")).body.total).toBe(0);
    expect((await get(d, "/nodes/picky-pack/versions/latest/comfy-nodes")).body.comfy_nodes).toEqual([
      comfyNodeDefinition("PickyNineClass"),
      comfyNodeDefinition("PickySampler"),
    ]);

    const stored = await d.engine.get("picky-pack", { includeBanned: false });
    expect(stored?.versions?.map((v) => [v.version, v.status])).toEqual([
      ["2.0.0", "NodeVersionStatusBanned"],
      ["1.10.0", "NodeVersionStatusActive"],
      ["1.9.0", "NodeVersionStatusActive"],
    ]);
    expect(stored?.app_node_names_version).toBe("1.9.0");
    // A generated pack's classes came through the registry's routes too.
    const withClasses = NODES.find(
      (n) => n.status === "NodeStatusActive" && Array.isArray(n.app_node_names) && (n.app_node_names as string[]).length > 0,
    )!;
    const cls = (withClasses.app_node_names as string[])[0]!;
    const hit = await get(d, `/nodes/search?comfy_node_search=${encodeURIComponent(cls)}&limit=100`);
    expect(hit.body.nodes.map((n: { id: string }) => n.id)).toContain(withClasses.id);
  });

  it("a mirrored catalog answers the clients' /comfy-nodes/{name}/node and /nodes/{id}/install as the registry does, with a download URL", async () => {
    const r = await registry([...NODES, PICKY]);
    const d = await deps({ DATA_DIR: harness.path("client-routes"), CATALOG_SOURCE: r.url });
    await mirrored(d);
    const provider = await get(d, "/comfy-nodes/PickySampler/node");
    expect(provider.status).toBe(200);
    expect(provider.body).toMatchObject({ id: "picky-pack", latest_version: { version: "1.9.0" } });
    const upstream = (await (await fetch(`${r.url}/nodes/picky-pack/install`)).json()) as { version: string; downloadUrl: string };
    const install = await get(d, "/nodes/picky-pack/install");
    expect(install.status).toBe(200);
    expect(install.body).toMatchObject({ node_id: "picky-pack", version: upstream.version, downloadUrl: upstream.downloadUrl });
    expect(install.body.downloadUrl).not.toBe("");
    // A class of a version the install does not take is no class of the pack's.
    expect((await get(d, "/comfy-nodes/PickyTenClass/node")).status).toBe(404);
  });

  it("the pack list is served before classes arrive, and /readyz shows the progress and the errors", async () => {
    const r = await registry();
    r.delayMs = 15;
    const failing = NODES.find((n) => n.status === "NodeStatusActive")!.id;
    // Its versions come from the list of every version; its classes fail.
    r.fault(new RegExp(`^/nodes/${failing}/versions/[^/]+/comfy-nodes$`), "500", 2);
    const d = await deps({ DATA_DIR: harness.path("progress"), CATALOG_SOURCE: r.url }, { attempts: 2 });
    await waitUntil(
      () => d.catalogStatus().mirror?.phase === "details" && d.catalogStatus().state === "fresh",
      "the pack list to be served",
    );
    const during = (await get(d, "/readyz")).body.catalog;
    expect(during).toMatchObject({
      state: "fresh",
      nodes: NODES.length,
      mirror: { pass: "full", phase: "details", packs: { read: NODES.length, total: NODES.length } },
    });
    expect(during.mirror.versions.done).toBeLessThan(during.mirror.versions.of);
    await mirrored(d);
    const after = (await get(d, "/readyz")).body.catalog;
    const readable = NODES.filter((n) => n.status !== "NodeStatusBanned").length;
    expect(after.mirror).toMatchObject({ phase: "done", versions: { done: readable - 1, of: readable }, classes: readable - 1, errors: 1 });
    expect(after.mirror.requests).toBeGreaterThan(readable);
    // The pack whose versions failed is served from its list entry; the next pass asks again.
    expect((await d.engine.get(failing, { includeBanned: true }))?.versions).toBeUndefined();
  });

  it("a long pass serves the versions and classes read so far, before it is done", async () => {
    const r = await registry();
    r.delayMs = 20;
    const d = await deps({ DATA_DIR: harness.path("partial"), CATALOG_SOURCE: r.url }, { landEveryMs: 100 });
    const ids = NODES.filter((n) => n.status === "NodeStatusActive").map((n) => n.id);
    await waitUntil(async () => {
      if (d.catalogStatus().mirror?.phase !== "details") return false;
      const served = await Promise.all(ids.map((id) => d.engine.get(id, { includeBanned: false })));
      const withVersions = served.filter((n) => n?.versions).length;
      return withVersions > 0 && withVersions < ids.length;
    }, "some packs' versions to be served while the pass still reads others");
    await mirrored(d);
  });
});

describe("faults on the per-pack routes", () => {
  it("a pack's class list that never answers is abandoned, tried again, and the pass completes with every class", async () => {
    const nodes = NODES.slice(0, 40);
    const r = await registry(nodes);
    const pack = nodes.find(
      (n) => n.status === "NodeStatusActive" && Array.isArray(n.app_node_names) && (n.app_node_names as string[]).length > 0,
    )!;
    r.fault(new RegExp(`^/nodes/${pack.id}/versions/[^/]+/comfy-nodes$`), "stall", 1);
    // The only short timeout here: every other answer comes well within it, the stalled one never does.
    const d = await deps({ DATA_DIR: harness.path("stall"), CATALOG_SOURCE: r.url }, { headersTimeoutMs: 2000 });
    await mirrored(d);
    expect(d.catalogStatus().mirror).toMatchObject({ errors: 0 });
    expect(r.requests(new RegExp(`^/nodes/${pack.id}/versions/[^/]+/comfy-nodes$`))).toHaveLength(2);
    expect((await d.engine.get(pack.id, { includeBanned: true }))?.app_node_names).toEqual(pack.app_node_names);
  });
});

describe("kept in step", () => {
  it("an incremental refresh picks up an added pack, a new version with a new class and a ban; the full pass a deletion", async () => {
    const r = await registry();
    const d = await deps({ DATA_DIR: harness.path("incremental"), CATALOG_SOURCE: r.url });
    await mirrored(d);
    const [published, banned, removed] = NODES.filter((n) => n.status === "NodeStatusActive").map((n) => n.id);
    const before = r.log.length;
    r.addPack({ id: "brand-new-pack", name: "Brand New Pack", status: "NodeStatusActive", app_node_names: ["BrandNewClass"] });
    r.publish(published!, "9.0.0", ["FreshlyPublishedClass"]);
    r.ban(banned!);
    r.remove(removed!);

    await d.reindex(r.url);
    const asked = r.log.slice(before);
    expect(asked.filter((q) => q.path === "/nodes").every((q) => q.query.has("timestamp"))).toBe(true);
    // Versions asked for only the packs that changed (the banned one is not asked: the registry keeps its versions to itself).
    expect(
      asked
        .filter((q) => q.path.endsWith("/versions"))
        .map((q) => q.path)
        .sort(),
    ).toEqual([`/nodes/${published}/versions`, "/nodes/brand-new-pack/versions"].sort());
    expect(d.catalogStatus().mirror).toMatchObject({ pass: "incremental", errors: 0 });
    expect((await get(d, "/nodes/search?comfy_node_search=BrandNewClass")).body.nodes[0]?.id).toBe("brand-new-pack");
    const fresh = await get(d, "/nodes/search?comfy_node_search=FreshlyPublishedClass");
    expect(fresh.body.nodes[0]).toMatchObject({ id: published, latest_version: { version: "9.0.0" } });
    expect((await get(d, `/nodes/${banned}`)).status).toBe(403);
    expect((await get(d, `/nodes/${banned}?include_banned=true`)).body.status).toBe("NodeStatusBanned");
    // A deletion leaves no trace in `timestamp=`: the pack stays until the next full pass.
    expect((await get(d, `/nodes/${removed}`)).status).toBe(200);

    const quiet = r.log.length;
    await d.reindex(r.url);
    expect(r.log.length - quiet).toBe(1); // nothing changed: one list request

    await d.reindex(r.url, { full: true });
    expect((await get(d, `/nodes/${removed}`)).status).toBe(404);
    expect(d.catalogStatus()).toMatchObject({ nodes: NODES.length, missing: null, mirror: { pass: "full" } });
  });

  it("mirrors another instance of this service, which refuses sort and timestamp: each refresh a full pass, classes and versions intact", async () => {
    const r = await registry([...NODES, PICKY]);
    const first = await deps({ DATA_DIR: harness.path("chain-upstream"), CATALOG_SOURCE: r.url });
    await mirrored(first);
    const upstream = createServer(createApp(first));
    await new Promise<void>((ok) => upstream.listen(0, "127.0.0.1", ok));
    try {
      const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
      const second = await deps({ DATA_DIR: harness.path("chain-downstream"), CATALOG_SOURCE: url });
      await mirrored(second);
      await second.reindex(url);
      // This service never lists a deleted pack; every other one comes through.
      const listed = NODES.filter((n) => n.status !== "NodeStatusDeleted").length + 1;
      expect(second.catalogStatus()).toMatchObject({ nodes: listed, missing: null, mirror: { pass: "full", errors: 0 } });
      const found = await get(second, "/nodes/search?comfy_node_search=PickySampler");
      expect(found.body.nodes[0]).toMatchObject({
        id: "picky-pack",
        latest_version: { version: "1.9.0", downloadUrl: expect.stringMatching(/^https?:\/\/./) },
      });
      expect((await second.engine.get("picky-pack", { includeBanned: false }))?.versions).toHaveLength(3);
    } finally {
      upstream.closeAllConnections();
      await new Promise<void>((ok) => upstream.close(() => ok()));
    }
  });

  it("at scale, a worker goes on from the shared index, not from its own older memory: a pack deleted since stays gone", async () => {
    const r = await registry();
    // One index both workers write, as Meilisearch is (an embedded index that says it is shared).
    const inner = new EmbeddedSearchEngine();
    const shared = new Proxy(inner, { get: (t, k) => (k === "kind" ? "meilisearch" : Reflect.get(t, k)) }) as SearchEngine;
    const worker = (name: string) =>
      createSearchRuntime(loadConfig({ LOG_LEVEL: "silent", DATA_DIR: harness.path(name), CATALOG_SOURCE: "none" }), silentLogger, {
        role: "writer",
        engine: shared,
        mirror,
      });
    const a = await worker("worker-a");
    const b = await worker("worker-b");
    try {
      await a.reindex(r.url);
      await b.reindex(r.url);
      const [gone, installed] = NODES.filter((n) => n.status === "NodeStatusActive").map((n) => n.id);
      r.remove(gone!);
      r.touch(installed!, { downloads: 123_456 }); // so that b's refresh has something to write
      await a.reindex(r.url, { full: true });
      expect(await shared.get(gone!, { includeBanned: true })).toBeUndefined();
      const before = r.log.length;
      await b.reindex(r.url); // incremental: b's own memory still holds the pack
      expect(r.log.slice(before).every((q) => q.path !== "/nodes" || q.query.has("timestamp"))).toBe(true);
      expect((await shared.get(installed!, { includeBanned: true }))?.downloads).toBe(123_456);
      expect(await shared.get(gone!, { includeBanned: true })).toBeUndefined();
      expect(await shared.count()).toBe(NODES.filter((n) => n.status !== "NodeStatusDeleted").length - 1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a restart with no registry serves the classes and versions from the snapshot", async () => {
    const r = await registry([...NODES, PICKY]);
    const dataDir = harness.path("offline");
    const d = await deps({ DATA_DIR: dataDir, CATALOG_SOURCE: r.url });
    await mirrored(d);
    await d.close();
    const url = r.url;
    await r.stop();

    const offline = await deps({ DATA_DIR: dataDir, CATALOG_SOURCE: url });
    await offline.started;
    expect(offline.catalogStatus()).toMatchObject({ state: "stale", nodes: NODES.length + 1 });
    const found = await get(offline, "/nodes/search?comfy_node_search=PickySampler");
    expect(found.body.nodes[0]).toMatchObject({
      id: "picky-pack",
      latest_version: { version: "1.9.0", downloadUrl: expect.stringMatching(/^https?:\/\/./) },
    });
    expect((await offline.engine.get("picky-pack", { includeBanned: false }))?.versions).toHaveLength(3);
  });
});
