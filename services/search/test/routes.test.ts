import request from "supertest";
import type { RequestListener } from "node:http";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { ComfyNodesPage, ErrorResponse, NODE_FIELDS, Node, SearchPage } from "@app/contracts";
import { appWith, FIXTURES, silentLogger } from "./helpers.ts";

let app: RequestListener;
beforeAll(async () => {
  ({ app } = await appWith(FIXTURES));
});

const get = (url: string) => request(app).get(url);

describe("GET /nodes/search", () => {
  it("answers the page envelope with defaults page 1, limit 10", async () => {
    const res = await get("/nodes/search");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/application\/json/);
    const page = SearchPage.strict().parse(res.body);
    expect(page).toMatchObject({ page: 1, limit: 10, total: 25, totalPages: 3 });
    expect(page.nodes).toHaveLength(10);
  });

  it.each([
    ["page=0", "page"],
    ["page=-3", "page"],
    ["page=1.5", "page"],
    ["page=abc", "page"],
    ["page=1&page=2", "page must be given once"],
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=ten", "limit"],
    ["limit=1&limit=2", "limit must be given once"],
    ["include_banned=true&include_banned=false", "include_banned must be given once"],
    ["search=a&search=b", "search must be given once"],
    ["include_banned=yes", "include_banned"],
    ["include_banned=1", "include_banned"],
    ["search=" + "x".repeat(600), "search"],
    ["app_node_search=a&comfy_node_search=b", "comfy_node_search"],
    ["comfy_node_search=a&comfy_node_search=b", "comfy_node_search"],
  ])("400 for %s, naming the parameter", async (qs, named) => {
    const res = await get(`/nodes/search?${qs}`);
    expect(res.status).toBe(400);
    const body = ErrorResponse.strict().parse(res.body);
    expect(body.error).toBe("invalid_parameter");
    expect(body.message).toContain(named);
  });

  it("ignores unknown parameters", async () => {
    const a = await get("/nodes/search?search=impact");
    const b = await get("/nodes/search?search=impact&foo=bar&x[y]=z");
    expect(b.status).toBe(200);
    expect(b.text).toBe(a.text);
  });

  it("every node carries only Node fields, with the right types and no nulls", async () => {
    const res = await get("/nodes/search?limit=100&include_banned=true");
    expect(res.status).toBe(200);
    const allowed = new Set<string>(NODE_FIELDS);
    for (const n of res.body.nodes as Record<string, unknown>[]) {
      Node.strict().parse(n);
      for (const [k, v] of Object.entries(n)) {
        expect(allowed.has(k), `unexpected key ${k}`).toBe(true);
        expect(v).not.toBeNull();
      }
      expect(n).not.toHaveProperty("app_node_names");
    }
    expect(res.text).not.toContain("null");
  });

  it("embeds latest_version and publisher, passes category through, and carries the public names beside ours", async () => {
    const res = await get("/nodes/search?search=impact%20pack&limit=1");
    const n = res.body.nodes[0];
    expect(n.id).toBe("comfyui-impact-pack");
    expect(n.category).toBe("image");
    expect(n.publisher).toEqual(FIXTURES[0]!.publisher);
    expect(n.latest_version).toMatchObject({ version: "8.0.0", app_node_extract_status: "success", comfy_node_extract_status: "success" });
    expect(n).toMatchObject({
      repo_stars: 2500,
      github_stars: 2500,
      preempted_app_node_names: ["SAMLoader"],
      preempted_comfy_node_names: ["SAMLoader"],
      supported_app_version: ">=0.3",
      supported_comfyui_version: ">=0.3",
      supported_app_frontend_version: ">=1.0",
      supported_comfyui_frontend_version: ">=1.0",
    });
    const kj = (await get("/nodes/kjnodes")).body;
    expect(kj).not.toHaveProperty("preempted_comfy_node_names");
    expect(kj.github_stars).toBe(3000);
  });

  it("filters: banned only with include_banned, deleted never", async () => {
    const without = await get("/nodes/search?search=pack&limit=100");
    const ids = without.body.nodes.map((n: Node) => n.id);
    expect(ids).not.toContain("banned-pack");
    expect(ids).not.toContain("deleted-pack");
    const withBanned = await get("/nodes/search?search=pack&limit=100&include_banned=true");
    const ids2 = withBanned.body.nodes.map((n: Node) => n.id);
    expect(ids2).toContain("banned-pack");
    expect(ids2).not.toContain("deleted-pack");
  });

  it("filters by os, accelerator, repository and app node name, combined with AND", async () => {
    const mac = await get("/nodes/search?supported_os=macOS&limit=100");
    expect(mac.body.total).toBe(1 + 11); // kjnodes (no list) + odd fillers
    const linuxCuda = await get("/nodes/search?supported_os=Linux&supported_accelerator=CUDA&limit=100");
    expect(linuxCuda.body.nodes.map((n: Node) => n.id)).toEqual(expect.arrayContaining(["comfyui-impact-pack", "kjnodes"]));
    expect(linuxCuda.body.total).toBe(2 + 12);
    const repo = await get("/nodes/search?repository_url_search=" + encodeURIComponent("https://www.github.com/kijai/comfyui-kjnodes.git"));
    expect(repo.body.nodes.map((n: Node) => n.id)).toEqual(["kjnodes"]);
    const app1 = await get("/nodes/search?app_node_search=facedetailer");
    const app2 = await get("/nodes/search?comfy_node_search=facedetailer");
    const app3 = await get("/nodes/search?comfy_node_search=facedetailer&app_node_search=facedetailer");
    expect(app1.body.nodes.map((n: Node) => n.id)).toEqual(["comfyui-impact-pack"]);
    expect(app2.text).toBe(app1.text);
    expect(app3.text).toBe(app1.text);
    const none = await get("/nodes/search?app_node_search=facedetailer&supported_os=macOS");
    expect(none.body).toMatchObject({ nodes: [], total: 0, totalPages: 0 });
  });

  it("pages through every match exactly once; a page past the end is empty with the right totals", async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await get(`/nodes/search?search=filler&limit=7&page=${page}`);
      expect(res.body).toMatchObject({ page, limit: 7, total: 23, totalPages: 4 });
      seen.push(...res.body.nodes.map((n: Node) => n.id));
    }
    expect(seen).toHaveLength(23);
    expect(new Set(seen).size).toBe(23);
    const past = await get("/nodes/search?search=filler&limit=7&page=9");
    expect(past.body).toEqual({ nodes: [], page: 9, limit: 7, total: 23, totalPages: 4 });
  });

  it("an empty catalog answers an empty page", async () => {
    const { app: empty } = await appWith([]);
    for (const url of ["/nodes/search", "/nodes/search?search=impact", "/nodes?page=3"]) {
      const res = await request(empty).get(url);
      expect(res.status).toBe(200);
      expect(res.body.nodes).toEqual([]);
      expect(res.body.total).toBe(0);
      expect(res.body.totalPages).toBe(0);
    }
  });
});

describe("repeated queries (parse, result and page text are remembered)", () => {
  it("answer the same bytes every time, and a 400 stays a 400", async () => {
    const first = await get("/nodes/search?search=impact%20pack&limit=3");
    for (let i = 0; i < 3; i++) {
      const again = await get("/nodes/search?search=impact%20pack&limit=3");
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
    }
    for (let i = 0; i < 2; i++) expect((await get("/nodes/search?limit=0")).status).toBe(400);
  });

  it("one result, asked for as different pages, gives each page its own envelope", async () => {
    const a = await get("/nodes/search?search=filler&limit=5&page=2");
    const b = await get("/nodes/search?search=filler&limit=5&page=3");
    expect(a.body).toMatchObject({ page: 2, limit: 5 });
    expect(b.body).toMatchObject({ page: 3, limit: 5 });
    expect(a.body.nodes[0].id).not.toBe(b.body.nodes[0].id);
  });

  it("after a reindex the same query string answers from the new index", async () => {
    const { app: own, engine } = await appWith(FIXTURES);
    const before = await request(own).get("/nodes/search?search=impact");
    expect(before.body.total).toBeGreaterThan(0);
    await engine.replaceAll(FIXTURES.filter((r) => !/impact/i.test(JSON.stringify(r))));
    const after = await request(own).get("/nodes/search?search=impact");
    expect(after.status).toBe(200);
    expect(after.body.total).toBe(0);
  });

  it("HEAD answers the GET's headers, Content-Length included, and no body", async () => {
    const g = await get("/nodes/search?search=impact");
    const h = await request(app).head("/nodes/search?search=impact");
    expect(h.status).toBe(200);
    expect(h.headers["content-length"]).toBe(String(Buffer.byteLength(g.text)));
    expect(h.headers["content-type"]).toBe(g.headers["content-type"]);
    expect(h.text ?? "").toBe("");
  });
});

describe("GET /nodes answers exactly as GET /nodes/search", () => {
  it.each([
    "",
    "?limit=30",
    "?limit=30&page=2",
    "?search=",
    "?search=&limit=100",
    "?search=impact%20pack",
    "?search=impcat",
    "?comfy_node_search=SAMLoader",
    "?supported_os=Windows&supported_accelerator=CUDA",
    "?include_banned=true&limit=100",
    "?page=0",
    "?limit=1000",
    "?include_banned=maybe",
  ])("%s", async (qs) => {
    const a = await get(`/nodes/search${qs}`);
    const b = await get(`/nodes${qs}`);
    expect(b.status).toBe(a.status);
    expect(b.text).toBe(a.text);
  });
});

describe("the direct route (ahead of Express) and Express's route answer alike", () => {
  // Exact paths are answered from node:http; other spellings reach the same handler through Express.
  it.each([
    "?search=impact%20pack",
    "?search=impcat&limit=5",
    "?supported_os=Windows&supported_accelerator=CUDA",
    "?page=0",
    "?search=a&search=b",
    "?search[x]=1",
  ])("%s", async (qs) => {
    const direct = await get(`/nodes/search${qs}`);
    for (const spelling of ["/nodes/search/", "/Nodes/Search"]) {
      const viaExpress = await get(`${spelling}${qs}`);
      expect(viaExpress.status).toBe(direct.status);
      expect(viaExpress.headers["content-type"]).toBe(direct.headers["content-type"]);
      expect(viaExpress.text).toBe(direct.text);
    }
  });

  it("an engine failure is a logged 500 {error, message} either way, and the service goes on answering", async () => {
    const { createApp } = await import("../src/app.ts");
    const logger = silentLogger.child({});
    const logged = vi.spyOn(logger, "error");
    const { engine } = await appWith(FIXTURES);
    let fail = true;
    const flaky = {
      ...engine,
      kind: engine.kind,
      get: engine.get.bind(engine),
      search: (q: Parameters<typeof engine.search>[0]) => (fail ? Promise.reject(new Error("disk on fire")) : engine.search(q)),
    };
    const a = createApp({ engine: flaky as unknown as typeof engine, logger, isReady: () => true });
    for (const path of ["/nodes/search?search=impact", "/nodes/search/?search=impact", "/nodes?search=impact"]) {
      const res = await request(a).get(path);
      expect(res.status).toBe(500);
      expect(ErrorResponse.strict().parse(res.body).error).toBe("internal_error");
    }
    expect(logged).toHaveBeenCalledTimes(3);
    expect(String((logged.mock.calls[0]![0] as { err: Error }).err)).toContain("disk on fire");
    fail = false;
    expect((await request(a).get("/nodes/search?search=impact")).body.total).toBeGreaterThan(0);
  });
});

describe("GET /nodes/:nodeId", () => {
  it("answers one node in the search page's shape", async () => {
    const one = await get("/nodes/comfyui-impact-pack");
    expect(one.status).toBe(200);
    const inPage = (await get("/nodes/search?search=impact%20pack&limit=1")).body.nodes[0];
    expect(one.body).toEqual(inPage);
    Node.strict().parse(one.body);
  });
  it.each([["/nodes/unknown-pack"], ["/nodes/deleted-pack"], ["/nodes/deleted-pack?include_banned=true"], ["/nodes/comfyui-kjnodes"]])(
    "404 {error, message} for %s",
    async (url) => {
      const res = await get(url);
      expect(res.status).toBe(404);
      expect(ErrorResponse.strict().parse(res.body).error).toBe("not_found");
    },
  );
  it('a banned node answers 403 "Node Banned" as the registry\'s GetNode, and the pack only with our include_banned=true', async () => {
    const res = await get("/nodes/banned-pack");
    expect(res.status).toBe(403);
    expect(ErrorResponse.strict().parse(res.body)).toEqual({ error: "forbidden", message: "Node Banned" });
    expect((await get("/nodes/banned-pack?include_banned=true")).body.id).toBe("banned-pack");
  });
  it("400 for a bad include_banned", async () => {
    const res = await get("/nodes/kjnodes?include_banned=nope");
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("include_banned");
  });
});

describe("GET /nodes/:nodeId/versions/:version/comfy-nodes", () => {
  it("lists the node's classes for `latest` and for its latest version's number", async () => {
    const byWord = await get("/nodes/comfyui-impact-pack/versions/latest/comfy-nodes");
    expect(byWord.status).toBe(200);
    expect(ComfyNodesPage.strict().parse(byWord.body)).toEqual({
      comfy_nodes: [{ comfy_node_name: "FaceDetailer" }, { comfy_node_name: "SAMLoader" }],
      totalNumberOfPages: 1,
    });
    const version = (await get("/nodes/comfyui-impact-pack")).body.latest_version.version;
    expect((await get(`/nodes/comfyui-impact-pack/versions/${version}/comfy-nodes`)).body).toEqual(byWord.body);
  });
  it("a node with no class names answers an empty list, on no pages", async () => {
    expect((await get("/nodes/banned-pack/versions/latest/comfy-nodes?include_banned=true")).body).toEqual({
      comfy_nodes: [],
      totalNumberOfPages: 0,
    });
  });
  it("a banned node answers 403 {error: forbidden}, as the registry's version routes do", async () => {
    const res = await get("/nodes/banned-pack/versions/latest/comfy-nodes");
    expect(res.status).toBe(403);
    expect(ErrorResponse.strict().parse(res.body).error).toBe("forbidden");
  });
  it.each([["/nodes/unknown-pack/versions/latest/comfy-nodes"], ["/nodes/comfyui-impact-pack/versions/0.0.0-old/comfy-nodes"]])(
    "404 {error, message} for %s",
    async (url) => {
      const res = await get(url);
      expect(res.status).toBe(404);
      expect(ErrorResponse.strict().parse(res.body).error).toBe("not_found");
    },
  );
});

describe("the standalone app", () => {
  it("healthz, readyz, metrics, 404 shape", async () => {
    expect((await get("/healthz")).status).toBe(200);
    expect((await get("/readyz")).status).toBe(200);
    const m = await get("/metrics");
    expect(m.status).toBe(200);
    expect(m.text).toContain("http_requests_total");
    const nf = await get("/nope");
    expect(nf.status).toBe(404);
    ErrorResponse.strict().parse(nf.body);
  });
  it("metrics count the memos' hits and misses: a new query is a miss, one remembered (from its second request on) a hit", async () => {
    const lookups = async () => {
      const text = (await get("/metrics")).text;
      const count = (memo: string, outcome: string) =>
        Number(new RegExp(`^search_memo_lookups_total\\{memo="${memo}",outcome="${outcome}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
      return {
        parseHit: count("parse", "hit"),
        parseMiss: count("parse", "miss"),
        resultHit: count("result", "hit"),
        resultMiss: count("result", "miss"),
      };
    };
    const unique = `search=metricsprobe${Date.now()}`;
    const before = await lookups();
    await get(`/nodes/search?${unique}`);
    const once = await lookups();
    expect(once.parseMiss - before.parseMiss).toBe(1);
    expect(once.resultMiss - before.resultMiss).toBe(1);
    expect(once.parseHit - before.parseHit).toBe(0);
    await get(`/nodes/search?${unique}`);
    const twice = await lookups();
    expect(twice.parseMiss - once.parseMiss).toBe(1);
    expect(twice.resultMiss - once.resultMiss).toBe(1);
    await get(`/nodes/search?${unique}`);
    const thrice = await lookups();
    expect(thrice.parseHit - twice.parseHit).toBe(1);
    expect(thrice.resultHit - twice.resultHit).toBe(1);
    expect(thrice.resultMiss - twice.resultMiss).toBe(0);
  });
  it("readyz is 503 until the catalog is indexed", async () => {
    const { createApp } = await import("../src/app.ts");
    const { silentLogger } = await import("./helpers.ts");
    const { EmbeddedSearchEngine } = await import("../src/adapters/embedded/embedded-engine.ts");
    let ready = false;
    const a = createApp({ engine: new EmbeddedSearchEngine(), logger: silentLogger, isReady: () => ready });
    const res = await request(a).get("/readyz");
    expect(res.status).toBe(503);
    ErrorResponse.strict().parse(res.body);
    ready = true;
    expect((await request(a).get("/readyz")).status).toBe(200);
  });
  it("a malformed path escape is a 400, not a 500", async () => {
    const res = await get("/nodes/%E0%A4%A");
    expect(res.status).toBe(400);
    ErrorResponse.strict().parse(res.body);
  });
});
