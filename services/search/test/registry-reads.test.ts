import request from "supertest";
import type { RequestListener } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  BulkNodeVersionsResponse,
  ComfyNodesPage,
  ErrorResponse,
  Node,
  NodeVersion,
  Publisher,
  SearchPage,
  VersionsPage,
} from "@app/contracts";
import { VERSIONED_CATALOG, VERSIONED_CATALOG_LISTED } from "@app/testkit/registry-versions-catalog";
import { parseCatalogRecord, type StoredNode } from "../src/domain/catalog-record.ts";
import { appWith } from "./helpers.ts";

/**
 * The registry's read routes on a catalog whose packs carry their versions: each answer's shape
 * (the contract schemas, strict where the registry's is closed) and the registry's rules.
 */
let app: RequestListener;
beforeAll(async () => {
  const records = VERSIONED_CATALOG.map((raw) => {
    const parsed = parseCatalogRecord(raw);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.record;
  }) satisfies StoredNode[];
  ({ app } = await appWith(records));
});

const get = (url: string) => request(app).get(url);
const expectError = async (url: string, status: number, error: string, says?: string) => {
  const res = await get(url);
  expect(res.status, url).toBe(status);
  const body = ErrorResponse.strict().parse(res.body);
  expect(body.error).toBe(error);
  if (says) expect(body.message).toContain(says);
};

describe("GET /nodes?node_id=…", () => {
  it("answers only those packs, not the most popular ones, on one page as large as the ids asked", async () => {
    const res = await get("/nodes?node_id=comfyui-impact-pack&node_id=legacy-pack&node_id=ComfyUI-KJNodes");
    const page = SearchPage.parse(res.body);
    expect(page.nodes.map((n) => n.id)).toEqual(["comfyui-impact-pack", "ComfyUI-KJNodes", "legacy-pack"]);
    expect(page).toMatchObject({ total: 3, page: 1, limit: 3, totalPages: 1 });
  });
  it("unknown, banned and deleted ids are left out; include_banned brings the banned one", async () => {
    expect(
      (await get("/nodes?node_id=nope&node_id=banned-pack&node_id=deleted-pack&node_id=legacy-pack")).body.nodes.map((n: Node) => n.id),
    ).toEqual(["legacy-pack"]);
    expect((await get("/nodes?node_id=banned-pack&include_banned=true")).body.nodes.map((n: Node) => n.id)).toEqual(["banned-pack"]);
    expect((await get("/nodes?node_id=nope")).body).toMatchObject({ nodes: [], total: 0 });
  });
  it("without limit, one page holds every pack asked, past the 100 a limit may ask", async () => {
    const ids = [...VERSIONED_CATALOG_LISTED, ...Array.from({ length: 150 }, (_, i) => `absent-${i}`)];
    const page = SearchPage.parse((await get(`/nodes?${ids.map((id) => `node_id=${encodeURIComponent(id)}`).join("&")}`)).body);
    expect(page).toMatchObject({ limit: ids.length, total: VERSIONED_CATALOG_LISTED.length, totalPages: 1 });
    expect(page.nodes).toHaveLength(VERSIONED_CATALOG_LISTED.length);
  });
  it("pages with an explicit limit and combines with search", async () => {
    const ids = VERSIONED_CATALOG_LISTED.map((id) => `node_id=${encodeURIComponent(id)}`).join("&");
    const first = SearchPage.parse((await get(`/nodes?${ids}&limit=10`)).body);
    expect(first).toMatchObject({ total: VERSIONED_CATALOG_LISTED.length, totalPages: Math.ceil(VERSIONED_CATALOG_LISTED.length / 10) });
    expect(
      (await get("/nodes/search?node_id=comfyui-impact-pack&node_id=sam-tools&search=detailer")).body.nodes.map((n: Node) => n.id),
    ).toEqual(["comfyui-impact-pack"]);
  });
  it.each([
    ["sort=downloads", "sort is not supported"],
    ["timestamp=2025-01-01T00:00:00Z", "timestamp is not supported"],
    ["node_id=" + "x".repeat(600), "node_id takes at most"],
    ["latest=yes", "latest must be true or false"],
  ])("refuses %s with 400, naming it", async (qs, says) => {
    await expectError(`/nodes?${qs}`, 400, "invalid_parameter", says);
  });
  it("refuses more than 500 ids, also past the query parser's 1,000-key cap, rather than answer a cut list", async () => {
    for (const n of [501, 1200])
      await expectError(
        `/nodes?${Array.from({ length: n }, (_, i) => `node_id=${i}`).join("&")}`,
        400,
        "invalid_parameter",
        "node_id takes at most 500",
      );
    expect((await get(`/nodes?${Array.from({ length: 500 }, (_, i) => `node_id=${i}`).join("&")}`)).body).toMatchObject({
      limit: 500,
      total: 0,
    });
  });
  it("takes ComfyUI-Manager's comfyui_version and form_factor, and latest=true, answering what it answers without them", async () => {
    const plain = await get("/nodes?page=2&limit=30");
    const manager = await get("/nodes?page=2&limit=30&comfyui_version=v0.3.40&form_factor=git-linux&latest=true");
    expect(manager.status).toBe(200);
    expect(manager.text).toBe(plain.text);
  });
});

describe("GET /nodes/{id}/install", () => {
  it("answers the install-path version (not the newest, which is banned), with its download URL", async () => {
    const v = NodeVersion.parse((await get("/nodes/comfyui-impact-pack/install")).body);
    expect(v).toMatchObject({
      id: "comfyui-impact-pack-8.8.1-uuid",
      node_id: "comfyui-impact-pack",
      version: "8.8.1",
      downloadUrl: "https://cdn.comfy.org/comfyui-impact-pack/8.8.1/node.zip",
    });
  });
  it("answers a named version whatever its status, as the registry does", async () => {
    expect((await get("/nodes/comfyui-impact-pack/install?version=8.7.0")).body).toMatchObject({ version: "8.7.0", deprecated: true });
    expect((await get("/nodes/comfyui-impact-pack/install?version=8.9.0")).body).toMatchObject({
      version: "8.9.0",
      status: "NodeVersionStatusBanned",
    });
  });
  it("a pack known by latest_version alone installs that, with a stable UUID for the id the clients require", async () => {
    const a = (await get("/nodes/legacy-pack/install")).body;
    expect(a).toMatchObject({ version: "0.9.0", node_id: "legacy-pack", downloadUrl: "https://cdn.comfy.org/legacy-pack/0.9.0/node.zip" });
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await get("/nodes/legacy-pack")).body.latest_version.id).toBe(a.id);
  });
  it.each([
    ["/nodes/comfyui-impact-pack/install?version=latest", 400, "invalid_parameter", "version must be"],
    ["/nodes/comfyui-impact-pack/install?version=1.2", 400, "invalid_parameter", "version must be"],
    ["/nodes/comfyui-impact-pack/install?version=1.0.0&version=2.0.0", 400, "invalid_parameter", "version must be given once"],
    ["/nodes/comfyui-impact-pack/install?version=9.9.9", 404, "not_found", "no version"],
    ["/nodes/unversioned-pack/install", 404, "not_found", "no installable version"],
    ["/nodes/no-such-pack/install", 404, "not_found", "no node"],
    ["/nodes/deleted-pack/install", 404, "not_found", "no node"],
    ["/nodes/banned-pack/install", 403, "forbidden", "Node Banned"],
  ])("%s → %i %s", async (url, status, error, says) => {
    await expectError(url, status, error, says);
  });
});

describe("a pack whose every version is deleted or banned", () => {
  it("answers the install 404 and, wherever the pack is answered, no latest_version (registry-backend GetLatestNodeVersion: nil)", async () => {
    await expectError("/nodes/withdrawn-pack/install", 404, "not_found", "no installable version");
    const one = await get("/nodes/withdrawn-pack");
    expect(one.status).toBe(200);
    expect(Node.strict().parse(one.body).latest_version).toBeUndefined();
    const listed = SearchPage.parse((await get("/nodes?node_id=withdrawn-pack")).body).nodes;
    expect(listed.map((n) => n.id)).toEqual(["withdrawn-pack"]);
    expect(listed[0]!.latest_version).toBeUndefined();
    const found = SearchPage.parse((await get("/nodes/search?search=withdrawn")).body).nodes.find((n) => n.id === "withdrawn-pack");
    expect(found).toBeDefined();
    expect(found!.latest_version).toBeUndefined();
    const byClass = await get("/comfy-nodes/WithdrawnNode/node");
    expect(byClass.body.id).toBe("withdrawn-pack");
    expect(byClass.body.latest_version).toBeUndefined();
    expect((await get("/publishers/old-timer/nodes")).body.find((n: Node) => n.id === "withdrawn-pack").latest_version).toBeUndefined();
    await expectError("/nodes/withdrawn-pack/versions/latest", 404, "not_found", "no version");
  });
  it("still lists its versions, and answers each by number, as the registry does", async () => {
    const versions = z.array(NodeVersion).parse((await get("/nodes/withdrawn-pack/versions")).body);
    expect(versions.map((v) => [v.version, v.status])).toEqual([
      ["2.0.0", "NodeVersionStatusDeleted"],
      ["1.0.0", "NodeVersionStatusBanned"],
    ]);
    expect((await get("/nodes/withdrawn-pack/install?version=1.0.0")).body.status).toBe("NodeVersionStatusBanned");
  });
});

describe("a banned pack", () => {
  it.each([
    "/nodes/banned-pack",
    "/nodes/banned-pack/install",
    "/nodes/banned-pack/versions",
    "/nodes/banned-pack/versions/1.0.0",
    "/versions?nodeId=banned-pack",
  ])('%s answers 403 with the registry\'s message, "Node Banned"', async (url) => {
    const res = await get(url);
    expect(res.status).toBe(403);
    expect(ErrorResponse.strict().parse(res.body)).toEqual({ error: "forbidden", message: "Node Banned" });
  });
});

describe("an id in other capitals", () => {
  it.each([
    ["/nodes/comfyui-kjnodes", "/nodes/ComfyUI-KJNodes"],
    ["/nodes/COMFYUI-KJNODES/install?version=1.0.9", "/nodes/ComfyUI-KJNodes/install?version=1.0.9"],
    ["/nodes/comfyui-kjnodes/versions", "/nodes/ComfyUI-KJNodes/versions"],
    ["/nodes/Comfyui-Impact-Pack/versions/8.8.1/comfy-nodes?limit=2", "/nodes/comfyui-impact-pack/versions/8.8.1/comfy-nodes?limit=2"],
  ])("%s is redirected (302) to %s", async (from, to) => {
    const res = await get(from);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(to);
    expect((await get(to)).status).toBe(200);
  });
});

describe("GET /nodes/{id}/versions and /versions/{version}", () => {
  it("every version, newest first, status_reason only when asked", async () => {
    const all = (await get("/nodes/comfyui-impact-pack/versions")).body as NodeVersion[];
    expect(all.map((v) => v.version)).toEqual(["8.9.0", "8.8.1", "8.8.0", "8.7.0", "8.0.0"]);
    for (const v of all) expect(NodeVersion.strict().parse(v)).not.toHaveProperty("status_reason");
    const withReason = (await get("/nodes/comfyui-impact-pack/versions?include_status_reason=true")).body as NodeVersion[];
    expect(withReason[0]!.status_reason).toBe("malware found in the wheel");
  });
  it("a file's versions out of order are answered newest first, an undated one last", async () => {
    expect(((await get("/nodes/sam-tools/versions")).body as NodeVersion[]).map((v) => v.version)).toEqual(["2.0.0", "1.0.0", "0.9.0"]);
  });
  it("statuses (repeated) keeps those statuses: ComfyUI-Manager's Active + Pending", async () => {
    const res = await get("/nodes/comfyui-impact-pack/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending");
    expect((res.body as NodeVersion[]).map((v) => v.version)).toEqual(["8.8.1", "8.8.0", "8.7.0"]);
  });
  it("one version by number, or `latest` for the install-path one", async () => {
    expect(NodeVersion.parse((await get("/nodes/sam-tools/versions/1.0.0")).body)).toMatchObject({
      version: "1.0.0",
      node_id: "sam-tools",
    });
    expect((await get("/nodes/comfyui-impact-pack/versions/latest")).body).toMatchObject({ version: "8.8.1" });
    expect((await get("/nodes/unversioned-pack/versions/latest")).status).toBe(404);
  });
  it.each([
    ["/nodes/comfyui-impact-pack/versions?statuses=Active", 400, "invalid_parameter", "statuses must be"],
    ["/nodes/comfyui-impact-pack/versions?include_status_reason=1", 400, "invalid_parameter", "include_status_reason"],
    ["/nodes/comfyui-impact-pack/versions/9.9.9", 404, "not_found", "no version"],
    ["/nodes/no-such-pack/versions", 404, "not_found", "no node"],
    ["/nodes/banned-pack/versions", 403, "forbidden", "Node Banned"],
    ["/nodes/banned-pack/versions/1.0.0", 403, "forbidden", "Node Banned"],
  ])("%s → %i %s", async (url, status, error, says) => {
    await expectError(url, status, error, says);
  });
});

describe("GET /versions", () => {
  it("pages every version of every listed pack, newest first", async () => {
    const first = VersionsPage.strict().parse((await get("/versions?pageSize=3")).body);
    expect(first).toMatchObject({ page: 1, pageSize: 3 });
    expect(first.versions.map((v) => `${v.node_id}@${v.version}`)).toEqual([
      "comfyui-impact-pack@8.9.0",
      "ComfyUI-KJNodes@1.1.0",
      "comfyui-impact-pack@8.8.1",
    ]);
    expect(first.totalPages).toBe(Math.ceil(first.total / 3));
    const seen: string[] = [];
    for (let page = 1; page <= first.totalPages; page++)
      seen.push(...(await get(`/versions?pageSize=3&page=${page}`)).body.versions.map((v: NodeVersion) => `${v.node_id}@${v.version}`));
    expect(seen).toHaveLength(first.total);
    expect(new Set(seen).size).toBe(first.total);
    expect(seen).not.toContain("banned-pack@1.0.0");
  });
  it("nodeId, statuses and status_reason filter", async () => {
    expect((await get("/versions?nodeId=sam-tools")).body).toMatchObject({ total: 3, totalPages: 1, pageSize: 10 });
    expect(
      (await get("/versions?nodeId=comfyui-impact-pack&statuses=NodeVersionStatusDeleted")).body.versions.map(
        (v: NodeVersion) => v.version,
      ),
    ).toEqual(["8.0.0"]);
    const byReason = (await get("/versions?status_reason=MALWARE&include_status_reason=true")).body;
    expect(byReason.versions.map((v: NodeVersion) => `${v.node_id}@${v.version}`)).toEqual(["comfyui-impact-pack@8.9.0"]);
    expect((await get("/versions?nodeId=no-such-pack")).body).toMatchObject({ total: 0, versions: [], totalPages: 0 });
  });
  it.each([
    ["/versions?pageSize=101", 400, "invalid_parameter", "pageSize"],
    ["/versions?page=0", 400, "invalid_parameter", "page"],
    ["/versions?statuses=nope", 400, "invalid_parameter", "statuses"],
    ["/versions?nodeId=banned-pack", 403, "forbidden", "Node Banned"],
  ])("%s → %i %s", async (url, status, error, says) => {
    await expectError(url, status, error, says);
  });
});

describe("GET /nodes/{id}/versions/{version}/comfy-nodes", () => {
  it("pages the classes of the version the catalog holds them for, as the registry pages them", async () => {
    const p1 = ComfyNodesPage.parse((await get("/nodes/comfyui-impact-pack/versions/8.8.1/comfy-nodes?limit=2")).body);
    expect(p1).toEqual({ comfy_nodes: [{ comfy_node_name: "FaceDetailer" }, { comfy_node_name: "SAMLoader" }], totalNumberOfPages: 2 });
    expect((await get("/nodes/comfyui-impact-pack/versions/8.8.1/comfy-nodes?limit=2&page=2")).body.comfy_nodes).toEqual([
      { comfy_node_name: "DetailerForEach" },
    ]);
    expect((await get("/nodes/comfyui-impact-pack/versions/latest/comfy-nodes?page=1&limit=8192")).body.comfy_nodes).toHaveLength(3);
    expect((await get("/nodes/comfyui-impact-pack/versions/8.8.1/comfy-nodes")).body.totalNumberOfPages).toBe(1);
  });
  it("another known version answers 404 saying the classes are held for one version only", async () => {
    await expectError("/nodes/comfyui-impact-pack/versions/8.7.0/comfy-nodes", 404, "not_found", 'version "8.7.0" exists');
    await expectError("/nodes/comfyui-impact-pack/versions/latest/comfy-nodes?limit=0", 400, "invalid_parameter", "limit");
  });
});

describe("GET /comfy-nodes/{name}/node", () => {
  it("a pack that preempts the name wins over a more popular, better-ranked one", async () => {
    expect(Node.parse((await get("/comfy-nodes/SAMLoader/node")).body).id).toBe("comfyui-impact-pack");
  });
  it("otherwise the lower search_ranking wins over more installs", async () => {
    expect((await get("/comfy-nodes/UltralyticsDetectorProvider/node")).body.id).toBe("comfyui-impact-subpack");
  });
  it("a class one pack provides finds it; the exact name only; never a banned pack", async () => {
    expect((await get("/comfy-nodes/SAMDetector/node")).body.id).toBe("sam-tools");
    await expectError("/comfy-nodes/samloader/node", 404, "not_found", "samloader");
    await expectError("/comfy-nodes/NoSuchNode/node", 404, "not_found");
  });
});

describe("POST /bulk/nodes/versions", () => {
  it("answers each identifier in order: success with the version, or not_found", async () => {
    const res = await request(app)
      .post("/bulk/nodes/versions")
      .send({
        node_versions: [
          { node_id: "comfyui-impact-pack", version: "8.7.0" },
          { node_id: "sam-tools", version: "9.9.9" },
          { node_id: "banned-pack", version: "1.0.0" },
          { node_id: "no-such-pack", version: "1.0.0" },
          { node_id: "legacy-pack", version: "0.9.0" },
        ],
      });
    expect(res.status).toBe(200);
    const body = BulkNodeVersionsResponse.parse(res.body);
    expect(body.node_versions.map((r) => r.status)).toEqual(["success", "not_found", "not_found", "not_found", "success"]);
    expect(body.node_versions[0]).toMatchObject({
      identifier: { node_id: "comfyui-impact-pack", version: "8.7.0" },
      node_version: { version: "8.7.0", deprecated: true },
    });
  });
  it.each([
    ["not json", "{nope"],
    ["no node_versions", JSON.stringify({})],
    ["an identifier without version", JSON.stringify({ node_versions: [{ node_id: "x" }] })],
  ])("400 {error, message} for %s", async (_what, body) => {
    const res = await request(app).post("/bulk/nodes/versions").set("content-type", "application/json").send(body);
    expect(res.status).toBe(400);
    ErrorResponse.strict().parse(res.body);
  });
});

describe("GET /publishers/{id} and /publishers/{id}/nodes", () => {
  it("a publisher as its packs embed it, and its packs", async () => {
    expect(Publisher.parse((await get("/publishers/ltdrdata")).body)).toEqual({ id: "ltdrdata", name: "Dr.Lt.Data" });
    expect((await get("/publishers/ltdrdata/nodes")).body.map((n: Node) => n.id)).toEqual([
      "comfyui-impact-pack",
      "comfyui-impact-subpack",
    ]);
    expect((await get("/publishers/ltdrdata/nodes?include_banned=true")).body.map((n: Node) => n.id)).toEqual([
      "comfyui-impact-pack",
      "comfyui-impact-subpack",
      "banned-pack",
    ]);
  });
  it("an unknown publisher: 404 for itself, an empty list for its packs", async () => {
    await expectError("/publishers/nobody", 404, "not_found", "nobody");
    expect((await get("/publishers/nobody/nodes")).body).toEqual([]);
    await expectError("/publishers/ltdrdata/nodes?include_banned=maybe", 400, "invalid_parameter", "include_banned");
  });
});
