import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import {
  MANAGER_LIST_FILES,
  MANAGER_STARTUP_FILES,
  managerLoadNightly,
  managerMissingNodePacks,
  managerPopulateStats,
  mapNodeToNodeClass,
  mapNodeVersion,
} from "@app/testkit/registry-clients";
import { VERSIONED_CATALOG, VERSIONED_CATALOG_LISTED } from "@app/testkit/registry-versions-catalog";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import { serveOn } from "./web-support.ts";

/**
 * The registry's three clients, replayed request for request against the gateway on a real
 * port, each reading what it reads (a missing key its code indexes would be its crash):
 *
 * - ComfyUI-Manager, glob/cnr_utils.py (Comfy-Org/ComfyUI-Manager f39cbd5): the start-up list,
 *   `install_node`, `all_versions_of_node` (and cm-cli's `show-versions`, which prints them).
 * - comfy-cli, comfy_cli/registry/api.py (Comfy-Org/comfy-cli e805d26): `list_all_nodes`,
 *   `get_node`, `install_node`, from the base URL its ENVIRONMENT setting selects.
 * - the ComfyUI frontend, src/services/comfyRegistryService.ts (Comfy-Org/ComfyUI_frontend):
 *   every read it makes (axios; arrays as repeated parameters).
 *
 * fetch follows a 302 as Python's requests and the browser do.
 */
let base: string;
let closables: Closable[] = [];
let dataDir: string;
let stopServer = async () => {};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "registry-clients-"));
  const catalog = join(dataDir, "catalog.ndjson");
  await writeFile(catalog, VERSIONED_CATALOG.map((r) => JSON.stringify(r)).join("\n"));
  const logger = createLogger("registry-clients", "silent");
  const composed = await composeGateway(
    loadConfig({ DATA_DIR: dataDir, CATALOG_SOURCE: catalog, API_KEYS: "k", LOG_LEVEL: "silent" }),
    logger,
  );
  closables = composed.closables;
  const server = await serveOn(createGatewayApp({ services: composed.services, logger }));
  base = server.url;
  stopServer = server.close;
  while ((await fetch(`${base}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 50));
}, 60_000);

afterAll(async () => {
  await stopServer();
  for (const c of closables) await c.close();
  await rm(dataDir, { recursive: true, force: true });
});

type Json = Record<string, any>;
const getJson = async (url: string): Promise<{ status: number; body: any }> => {
  const res = await fetch(url);
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text() };
};

/** The catalog's install-path version: its latest_version, unless deleted or banned (then none, as the registry answers). */
const installPath = (id: string) => {
  const latest = VERSIONED_CATALOG.find((n) => n.id === id)!.latest_version as Json | undefined;
  return latest && !["NodeVersionStatusDeleted", "NodeVersionStatusBanned"].includes(latest.status) ? latest.version : undefined;
};

describe("ComfyUI-Manager (glob/cnr_utils.py)", () => {
  it("start-up list: every listed pack, paged 30 at a time with its comfyui_version and form_factor, each with its install-path latest_version", async () => {
    const full = new Map<string, Json>();
    let page = 1;
    for (let remained = true; remained; page++) {
      const { status, body } = await getJson(`${base}/nodes?page=${page}&limit=30&comfyui_version=v0.3.68&form_factor=git-linux`);
      expect(status).toBe(200);
      remained = page < body.totalPages;
      for (const x of body.nodes) full.set(x.id, x);
    }
    expect(page - 1).toBe(Math.ceil(VERSIONED_CATALOG_LISTED.length / 30));
    expect([...full.keys()].sort()).toEqual([...VERSIONED_CATALOG_LISTED].sort());
    for (const [id, v] of full) {
      // The Manager gives a pack without latest_version a "nightly" one, then reads cnr['latest_version']['version'].
      const version = (v.latest_version ?? { version: "nightly" }).version;
      expect(version, id).toBe(installPath(id) ?? "nightly");
    }
  });

  it("install lookup: /nodes/{id}/install with and without ?version=, mapped as install_node maps it", async () => {
    const latest = await getJson(`${base}/nodes/comfyui-impact-pack/install`);
    expect(latest.status).toBe(200);
    expect(mapNodeVersion(latest.body)).toEqual({
      changelog: "Release 8.8.1",
      dependencies: ["ultralytics", "segment-anything"],
      deprecated: false,
      id: "comfyui-impact-pack-8.8.1-uuid",
      version: "8.8.1",
      // The archive is served here (MIRROR_ARCHIVES=on-demand, the default), at the address the client used.
      download_url: `${base}/archives/comfyui-impact-pack/8.8.1/node.zip`,
    });
    const pinned = await getJson(`${base}/nodes/comfyui-impact-pack/install?version=8.7.0`);
    expect(mapNodeVersion(pinned.body)).toMatchObject({
      version: "8.7.0",
      deprecated: true,
      download_url: `${base}/archives/comfyui-impact-pack/8.7.0/node.zip`,
    });
    // install_node answers None on any other status: the Manager then reports the pack as not installable.
    expect((await getJson(`${base}/nodes/unversioned-pack/install`)).status).toBe(404);
  });

  it("version list: Active and Pending versions, which cm-cli show-versions prints as [createdAt[:10]] version -- changelog", async () => {
    const { status, body } = await getJson(
      `${base}/nodes/comfyui-impact-pack/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending`,
    );
    expect(status).toBe(200);
    const lines = (body as Json[]).map((x) => `[${x.createdAt.slice(0, 10)}] ${x.version} -- ${x.changelog}`);
    expect(lines).toEqual([
      "[2025-06-01] 8.8.1 -- Release 8.8.1",
      "[2025-05-01] 8.8.0 -- Release 8.8.0",
      "[2025-04-01] 8.7.0 -- Release 8.7.0",
    ]);
  });
});

describe("ComfyUI-Manager with this service's /channel as its default channel (glob/manager_server.py, glob/manager_core.py)", () => {
  // channels.list `default::<base>/channel`, config.ini `channel_url = <base>/channel`, `default_cache_as_channel_url = True`.
  const channel = () => `${base}/channel`;

  it("start-up: the five files at once, the registry's list, then the node list again, each entry merged with its registry pack", async () => {
    const files = await Promise.all(MANAGER_STARTUP_FILES.map((f) => getJson(`${channel()}/${f}`)));
    expect(files.map((f) => f.status)).toEqual(MANAGER_STARTUP_FILES.map(() => 200));
    // unified_manager.reload('remote'): the registry's list, 30 a page, keyed by id and by normalised repository.
    const cnrByRepo = new Map<string, Json>();
    for (let page = 1, pages = 1; page <= pages; page++) {
      const { body } = await getJson(`${base}/nodes?page=${page}&limit=30&comfyui_version=v0.3.68&form_factor=git-linux`);
      pages = body.totalPages;
      for (const x of body.nodes) if (x.repository) cnrByRepo.set(x.repository.toLowerCase(), x);
    }
    // get_custom_nodes(channel_url, 'remote'): the list again; a single-file entry takes its registry pack's fields.
    const nightly = managerLoadNightly((await getJson(`${channel()}/custom-node-list.json`)).body);
    expect(nightly.size).toBeGreaterThan(0);
    for (const entry of nightly.values()) {
      if (entry.files.length !== 1) continue;
      const cnr = cnrByRepo.get(entry.files[0].toLowerCase());
      if (!cnr) continue;
      const merged = {
        cnr_latest: "latest_version" in cnr ? cnr["latest_version"]["version"] : "0.0.0",
        id: cnr["id"],
        author: cnr["publisher"]["name"],
        title: cnr["name"],
        description: cnr["description"],
      };
      expect(merged.id, entry.id).toBe(entry.id);
      expect(merged.cnr_latest, entry.id).toBe(installPath(entry.id) ?? "0.0.0");
    }
  });

  it("the list view: github-stats.json and extras.json from the default channel fill stars, dates, trust and favourites", async () => {
    const nightly = managerLoadNightly((await getJson(`${channel()}/custom-node-list.json`)).body);
    const [stats, extras] = await Promise.all(MANAGER_LIST_FILES.map(async (f) => (await getJson(`${channel()}/${f}`)).body));
    const populated = managerPopulateStats(nightly, stats, extras);
    expect(populated.get("comfyui-impact-pack")).toEqual({
      stars: 3262,
      last_update: "2025-06-01 00:00:00",
      trust: true,
      is_favorite: false,
    });
  });

  it("Install Missing Custom Nodes: a workflow's classes map to the repositories that provide them", async () => {
    const map = (await getJson(`${channel()}/extension-node-map.json`)).body;
    const found = managerMissingNodePacks(map, ["FaceDetailer", "WithdrawnNode", "NoSuchNode"]);
    expect(Object.fromEntries(found)).toEqual({
      FaceDetailer: ["https://github.com/ltdrdata/ComfyUI-Impact-Pack"],
      WithdrawnNode: ["https://github.com/old-timer/withdrawn-pack"],
      NoSuchNode: [],
    });
  });
});

describe("comfy-cli (comfy_cli/registry/api.py)", () => {
  it("list_all_nodes: GET /nodes, every node mapped", async () => {
    const { status, body } = await getJson(`${base}/nodes`);
    expect(status).toBe(200);
    const nodes = (body.nodes as Json[]).map(mapNodeToNodeClass);
    expect(nodes).toHaveLength(10);
    for (const n of nodes) expect(n.latest_version?.version).toBe(installPath(n.id));
  });

  it("get_node: GET /nodes/{id}, also from an id in other capitals (302, followed)", async () => {
    const exact = await fetch(`${base}/nodes/ComfyUI-KJNodes`);
    const other = await fetch(`${base}/nodes/comfyui-kjnodes`);
    expect([exact.status, other.status]).toEqual([200, 200]);
    expect(other.redirected).toBe(true);
    expect(mapNodeToNodeClass(await other.json())).toEqual(mapNodeToNodeClass(await exact.json()));
  });

  it("install_node: GET /nodes/{id}/install[?version=], mapped; an error status is raised as RegistryAPIError", async () => {
    const got = mapNodeVersion((await getJson(`${base}/nodes/comfyui-kjnodes/install?version=1.0.9`)).body);
    expect(got).toMatchObject({ version: "1.0.9", download_url: `${base}/archives/ComfyUI-KJNodes/1.0.9/node.zip` });
    const bad = await getJson(`${base}/nodes/comfyui-impact-pack/install?version=nightly`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: "invalid_parameter" });
  });
});

describe("the ComfyUI frontend (src/services/comfyRegistryService.ts)", () => {
  it("search: /nodes/search with search, page, limit (and comfy_node_search for node names)", async () => {
    const byPack = await getJson(`${base}/nodes/search?search=impact&page=1&limit=16`);
    expect(byPack.body.nodes[0].id).toBe("comfyui-impact-pack");
    const byNode = await getJson(`${base}/nodes/search?comfy_node_search=UltralyticsDetectorProvider&page=1&limit=16`);
    expect(byNode.body.nodes.map((n: Json) => n.id).sort()).toEqual(["comfyui-impact-subpack", "ultralytics-fork"]);
  });

  it("installed packs by id: listAllPacks({node_id: [...]}) with no limit answers those packs only, all of them", async () => {
    const installed = [
      "comfyui-impact-pack",
      "legacy-pack",
      "ComfyUI-KJNodes",
      "sam-tools",
      "comfyui-impact-subpack",
      "ultralytics-fork",
      "unversioned-pack",
      "popular-filler-03",
      "popular-filler-17",
      "popular-filler-29",
      "popular-filler-00",
      "not-in-registry",
    ];
    const { body } = await getJson(`${base}/nodes?${installed.map((id) => `node_id=${encodeURIComponent(id)}`).join("&")}`);
    expect((body.nodes as Json[]).map((n) => n.id).sort()).toEqual(installed.filter((id) => id !== "not-in-registry").sort());
  });

  it("class -> pack: /comfy-nodes/{name}/node, the preempting pack first; 404 for an unknown class", async () => {
    expect((await getJson(`${base}/comfy-nodes/SAMLoader/node`)).body).toMatchObject({
      id: "comfyui-impact-pack",
      name: "ComfyUI Impact Pack",
      latest_version: { version: "8.8.1" },
    });
    expect((await getJson(`${base}/comfy-nodes/NotARealNode/node`)).status).toBe(404);
  });

  it("a pack's page: getPackById, getPackVersions, getPackByVersion, getNodeDefs (page 1, limit 256)", async () => {
    const pack = (await getJson(`${base}/nodes/comfyui-impact-pack`)).body;
    const versions = (await getJson(`${base}/nodes/${pack.id}/versions?statuses=NodeVersionStatusActive`)).body as Json[];
    expect(versions.map((v) => v.version)).toEqual(["8.8.1", "8.7.0"]);
    expect((await getJson(`${base}/nodes/${pack.id}/versions/8.7.0`)).body).toMatchObject({ version: "8.7.0", deprecated: true });
    const defs = (await getJson(`${base}/nodes/${pack.id}/versions/${pack.latest_version.version}/comfy-nodes?page=1&limit=256`)).body;
    expect(defs.comfy_nodes.map((c: Json) => c.comfy_node_name)).toEqual(["FaceDetailer", "SAMLoader", "DetailerForEach"]);
    expect(
      (await getJson(`${base}/nodes/${pack.id}/versions/${pack.latest_version.version}/comfy-nodes?limit=8192`)).body.totalNumberOfPages,
    ).toBe(1);
    expect((await getJson(`${base}/nodes/banned-pack/versions`)).status).toBe(403);
  });

  it("conflict check: getPackByVersion(id, installed version || 'latest') for each installed pack", async () => {
    const installed: [string, string | undefined][] = [
      ["comfyui-impact-pack", "8.7.0"],
      ["ComfyUI-KJNodes", undefined],
      ["sam-tools", "nightly"],
    ];
    const answers = await Promise.all(installed.map(([id, ver]) => getJson(`${base}/nodes/${id}/versions/${ver || "latest"}`)));
    expect(answers.map((a) => [a.status, a.body.version, a.body.supported_os])).toEqual([
      [200, "8.7.0", ["OS Independent"]],
      [200, "1.1.0", ["OS Independent"]],
      [404, undefined, undefined],
    ]);
  });

  it("getBulkNodeVersions: POST /bulk/nodes/versions, each result's status and node_version", async () => {
    const res = await fetch(`${base}/bulk/nodes/versions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        node_versions: [
          { node_id: "comfyui-impact-pack", version: "8.8.1" },
          { node_id: "sam-tools", version: "0.0.1" },
        ],
      }),
    });
    const body = (await res.json()) as Json;
    expect(body.node_versions.map((r: Json) => [r.identifier.node_id, r.status, r.node_version?.downloadUrl])).toEqual([
      ["comfyui-impact-pack", "success", `${base}/archives/comfyui-impact-pack/8.8.1/node.zip`],
      ["sam-tools", "not_found", undefined],
    ]);
  });

  it("a publisher: getPublisherById, listPacksForPublisher(include_banned)", async () => {
    expect((await getJson(`${base}/publishers/ltdrdata`)).body).toEqual({ id: "ltdrdata", name: "Dr.Lt.Data" });
    const packs = (await getJson(`${base}/publishers/ltdrdata/nodes?include_banned=true`)).body as Json[];
    expect(packs.map((n) => n.id)).toEqual(["comfyui-impact-pack", "comfyui-impact-subpack", "banned-pack"]);
  });
});

describe("behind a gateway that proxies to the search service (SEARCH_URL), as compose and Kubernetes run it", () => {
  let proxied: string;
  let stopProxied = async () => {};
  let proxiedClosables: Closable[] = [];
  beforeAll(async () => {
    const logger = createLogger("registry-clients-proxy", "silent");
    // The embedded gateway above answers every search route: it stands in for the search service.
    const composed = await composeGateway(
      loadConfig({ DATA_DIR: join(dataDir, "proxied"), SEARCH_URL: base, API_KEYS: "k", LOG_LEVEL: "silent" }),
      logger,
    );
    proxiedClosables = composed.closables;
    const server = await serveOn(createGatewayApp({ services: composed.services, logger }));
    proxied = server.url;
    stopProxied = server.close;
  });
  afterAll(async () => {
    await stopProxied();
    for (const c of proxiedClosables) await c.close();
  });

  it.each([
    "/nodes?node_id=comfyui-impact-pack&node_id=legacy-pack",
    "/nodes/comfyui-impact-pack/install?version=8.7.0",
    "/nodes/comfyui-kjnodes/versions",
    "/nodes/comfyui-impact-pack/versions/latest/comfy-nodes?page=1&limit=256",
    "/versions?pageSize=3&page=2",
    "/comfy-nodes/SAMLoader/node",
    "/publishers/ltdrdata",
    "/publishers/ltdrdata/nodes?include_banned=true",
    "/versions?pageSize=101",
    "/channel/custom-node-list.json",
    "/channel/extension-node-map.json",
    "/channel/github-stats.json",
    "/channel/extras.json",
  ])("%s answers as the search service does", async (path) => {
    const [direct, viaProxy] = await Promise.all([getJson(`${base}${path}`), getJson(`${proxied}${path}`)]);
    // Each version's downloadUrl names the address its client used (the proxy forwards X-Forwarded-Host).
    expect(JSON.parse(JSON.stringify(viaProxy).replaceAll(`${proxied}/archives/`, `${base}/archives/`))).toEqual(direct);
  });

  it("/archives is routed to the search service, and the links name the proxying gateway", async () => {
    const install = await getJson(`${proxied}/nodes/comfyui-impact-pack/install`);
    expect(install.body.downloadUrl).toBe(`${proxied}/archives/comfyui-impact-pack/8.8.1/node.zip`);
    // A banned version's archive: the search service's own 403, not the gateway's 404 for an unknown route.
    const banned = await getJson(`${proxied}/archives/comfyui-impact-pack/8.9.0/node.zip`);
    expect([banned.status, banned.body.error]).toEqual([403, "forbidden"]);
    const redirect = await fetch(`${proxied}/archives/COMFYUI-KJNODES/1.0.9/node.zip`, { redirect: "manual" });
    expect([redirect.status, redirect.headers.get("location")]).toEqual([302, "/archives/ComfyUI-KJNodes/1.0.9/node.zip"]);
  });

  it("POST /bulk/nodes/versions and the 302 of an id in other capitals pass through", async () => {
    const body = JSON.stringify({ node_versions: [{ node_id: "sam-tools", version: "2.0.0" }] });
    const res = await fetch(`${proxied}/bulk/nodes/versions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(((await res.json()) as Json).node_versions[0].status).toBe("success");
    const redirect = await fetch(`${proxied}/nodes/COMFYUI-KJNODES/install`, { redirect: "manual" });
    expect([redirect.status, redirect.headers.get("location")]).toEqual([302, "/nodes/ComfyUI-KJNodes/install"]);
  });
});
