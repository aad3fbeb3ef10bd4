import { createServer, type Server } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogSource, loadCatalog, type BadRecord, type LoadProgress } from "../src/adapters/catalog-source.ts";
import { createApp } from "../src/app.ts";
import { appWith, FIXTURES, silentLogger } from "./helpers.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "search-catalog-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const good = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ id, name: id, status: "NodeStatusActive", ...extra });

describe("file sources", () => {
  it("reads NDJSON, reports bad lines by number and reason, and keeps going", async () => {
    const path = join(dir, "mixed.ndjson");
    await writeFile(
      path,
      [
        good("a"),
        "",
        "{not json",
        good("b", { repo_stars: "many" }),
        JSON.stringify({ name: "no id" }),
        "[1,2]",
        good("a"),
        good("c", { description: null, tags: ["x", null], publisher: { id: "p", logo: null } }),
        good("d", { created_at: "yesterday" }),
      ].join("\n"),
    );
    const bad: BadRecord[] = [];
    const progress: LoadProgress[] = [];
    const { records, progress: last } = await loadCatalog(path, {
      onBadRecord: (b) => bad.push(b),
      onProgress: (p) => progress.push(p),
      progressEvery: 2,
    });
    expect(records.map((r) => r.id)).toEqual(["a", "c"]);
    expect(records[1]).toEqual({ id: "c", name: "c", status: "NodeStatusActive", tags: ["x"], publisher: { id: "p" } });
    expect(last).toEqual({ read: 8, indexed: 2, skipped: 6 });
    expect(bad.map((b) => b.where)).toEqual(["line 3", "line 4", "line 5", "line 6", "line 7", "line 9"]);
    expect(bad[0]!.reason).toMatch(/JSON/);
    expect(bad[1]!.reason).toMatch(/repo_stars/);
    expect(bad[2]!.reason).toMatch(/id/);
    expect(bad[4]!.reason).toMatch(/duplicate/);
    expect(bad[5]!.reason).toMatch(/created_at/);
    expect(progress.length).toBeGreaterThanOrEqual(4);
  });

  it("reads a JSON array and the public registry's field names", async () => {
    const path = join(dir, "array.json");
    await writeFile(
      path,
      "  \n" +
        JSON.stringify([
          {
            id: "pub",
            github_stars: 42,
            preempted_comfy_node_names: ["X"],
            supported_comfyui_version: ">=1",
            supported_comfyui_frontend_version: ">=2",
            latest_version: { version: "1.0.0", comfy_node_extract_status: "success" },
          },
          { id: "both", repo_stars: 1, github_stars: 2 },
          "nope",
        ]),
    );
    const bad: BadRecord[] = [];
    const { records } = await loadCatalog(path, { onBadRecord: (b) => bad.push(b) });
    expect(records[0]).toEqual({
      id: "pub",
      repo_stars: 42,
      preempted_app_node_names: ["X"],
      supported_app_version: ">=1",
      supported_app_frontend_version: ">=2",
      latest_version: { version: "1.0.0", app_node_extract_status: "success" },
    });
    expect(records[1]).toEqual({ id: "both", repo_stars: 1 });
    expect(bad).toEqual([{ where: "element 3", reason: "not a JSON object" }]);
  });

  it("fails loudly only when the source itself cannot be read", async () => {
    await expect(loadCatalog(join(dir, "missing.ndjson"))).rejects.toThrow(/ENOENT/);
  });
});

describe("mirror mode: a registry-compatible API", () => {
  let server: Server;
  let base: string;
  let requests: string[] = [];
  beforeAll(async () => {
    // The upstream is our own search service, served over real HTTP, plus one broken record.
    const upstream = createApp({ engine: (await appWith(FIXTURES)).engine, logger: silentLogger, isReady: () => true });
    server = createServer((req, res) => {
      requests.push(req.url ?? "");
      if (req.url?.startsWith("/broken/nodes")) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ nodes: [{ id: "ok" }, { id: 5 }, null], page: 1, limit: 100, total: 3, totalPages: 1 }));
        return;
      }
      upstream(req, res);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("pages through GET /nodes and yields every record once", async () => {
    requests = [];
    const { records, progress } = await loadCatalog(base, { mirror: { pageSize: 10 } });
    // Asked with include_banned=true, the upstream answers every node but the deleted one: 26 of the fixtures.
    expect(progress).toEqual({ read: 26, indexed: 26, skipped: 0 });
    expect(new Set(records.map((r) => r.id)).size).toBe(26);
    // This service refuses `sort` (400): the mirror says so and pages in its order instead.
    expect(requests).toEqual([
      "/nodes?page=1&limit=10&sort=id&include_banned=true&latest=true",
      ...[1, 2, 3].map((p) => `/nodes?page=${p}&limit=10&include_banned=true&latest=true`),
    ]);
    const impact = records.find((r) => r.id === "comfyui-impact-pack")!;
    expect(impact.repo_stars).toBe(2500);
    expect(impact).not.toHaveProperty("github_stars");
    expect(impact.latest_version).toEqual(FIXTURES[0]!.latest_version);
  });

  it("accepts a base URL that already ends in /nodes, and reports bad records by page and item", async () => {
    const bad: BadRecord[] = [];
    const { records } = await loadCatalog(catalogSource(`${base}/broken/nodes/`), { onBadRecord: (b) => bad.push(b) });
    expect(records.map((r) => r.id)).toEqual(["ok"]);
    expect(bad.map((b) => b.where)).toEqual(["page 1 item 2", "page 1 item 3"]);
  });

  it("fails when the server cannot be reached", async () => {
    await expect(loadCatalog("http://127.0.0.1:1/")).rejects.toThrow();
  });
});
