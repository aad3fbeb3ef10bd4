import { readFileSync } from "node:fs";
import type { RequestListener } from "node:http";
import request from "supertest";
import { beforeAll, describe, expect, it } from "vitest";
import { AlterList, ChannelExtras, CustomNodeList, ExtensionNodeMap, GithubStats, ModelList } from "@app/contracts";
import { seeded, testCatalog } from "@app/testkit/catalog";
import { managerLoadNightly, managerMissingNodePacks, managerPopulateStats } from "@app/testkit/registry-clients";
import { VERSIONED_CATALOG, VERSIONED_CATALOG_LISTED } from "@app/testkit/registry-versions-catalog";
import { parseCatalogRecord, type StoredNode } from "../src/domain/catalog-record.ts";
import { appWith } from "./helpers.ts";

/**
 * ComfyUI-Manager's channel files under /channel/: their shapes (strict, as Manager indexes
 * them), one entry per pack not banned, and the extension map resolving a workflow's classes to
 * the packs that provide them, over the 5,892-pack catalog (or the generated one without it).
 */
const parse = (raw: unknown[]): StoredNode[] =>
  raw.map((r) => {
    const parsed = parseCatalogRecord(r);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.record;
  });

describe("the channel on a catalog with banned, deleted and withdrawn packs", () => {
  let app: RequestListener;
  beforeAll(async () => {
    ({ app } = await appWith(parse(VERSIONED_CATALOG)));
  });
  const get = (file: string) => request(app).get(`/channel/${file}`).expect(200).expect("content-type", /json/);

  it("custom-node-list.json: one git-clone entry per pack not banned (the withdrawn one included), none for the banned or deleted one", async () => {
    const list = CustomNodeList.strict().parse((await get("custom-node-list.json")).body);
    expect(list.custom_nodes.map((e) => e.id).sort()).toEqual([...VERSIONED_CATALOG_LISTED].sort());
    const impact = list.custom_nodes.find((e) => e.id === "comfyui-impact-pack")!;
    expect(impact).toEqual({
      author: "Dr.Lt.Data",
      title: "ComfyUI Impact Pack",
      id: "comfyui-impact-pack",
      reference: "https://github.com/ltdrdata/ComfyUI-Impact-Pack",
      files: ["https://github.com/ltdrdata/ComfyUI-Impact-Pack"],
      install_type: "git-clone",
      description: "Detector and detailer nodes.",
    });
    // A pack with no repository has nothing to clone: listed, with no files (Manager skips it).
    expect(list.custom_nodes.find((e) => e.id === "legacy-pack")).toMatchObject({ reference: "", files: [] });
  });

  it("extension-node-map.json: the pack's classes and name by repository, with its preemptions", async () => {
    const map = ExtensionNodeMap.parse((await get("extension-node-map.json")).body);
    expect(map["https://github.com/ltdrdata/ComfyUI-Impact-Pack"]).toEqual([
      ["FaceDetailer", "SAMLoader", "DetailerForEach"],
      { title_aux: "ComfyUI Impact Pack", preemptions: ["SAMLoader"] },
    ]);
    expect(map["https://github.com/old-timer/withdrawn-pack"]).toEqual([["WithdrawnNode"], { title_aux: "Withdrawn Pack" }]);
    expect(Object.values(map).some(([names]) => names.includes("FillerNode0"))).toBe(false); // fillers have no repository
  });

  it("github-stats.json: stars, Manager's date format and an author age for every pack with a repository", async () => {
    const stats = GithubStats.parse((await get("github-stats.json")).body);
    const impact = stats["https://github.com/ltdrdata/ComfyUI-Impact-Pack"]!;
    expect(impact.stars).toBe(3262);
    expect(impact.last_update).toBe("2025-06-01 00:00:00"); // the install-path version 8.8.1, not the banned 8.9.0
    expect(impact.author_account_age_days).toBeGreaterThan(600); // created 2023-05-03
    // Every version withdrawn: the newest one's date still tells when it was last updated.
    expect(stats["https://github.com/old-timer/withdrawn-pack"]).toMatchObject({ stars: 0, last_update: "2025-02-01 00:00:00" });
  });

  it("model-list.json, alter-list.json and extras.json: empty, in the keys Manager indexes", async () => {
    expect(ModelList.strict().parse((await get("model-list.json")).body)).toEqual({ models: [] });
    expect(AlterList.strict().parse((await get("alter-list.json")).body)).toEqual({ items: [] });
    expect(ChannelExtras.strict().parse((await get("extras.json")).body)).toEqual({ favorites: [] });
  });

  it("an unknown channel file is a 404 {error, message}", async () => {
    const res = await request(app).get("/channel/node-db.json").expect(404);
    expect(res.body.error).toBe("not_found");
  });
});

describe(`the channel over ${testCatalog().kind === "real" ? "the 5,892-pack catalog" : "the generated catalog"}`, () => {
  let app: RequestListener;
  /** The packs served: not banned, not deleted. */
  let packs: StoredNode[];
  beforeAll(async () => {
    const lines = readFileSync(testCatalog().path, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "");
    const all = parse(lines.map((l) => JSON.parse(l)));
    ({ app } = await appWith(all));
    packs = all.filter((p) => p.status !== "NodeStatusBanned" && p.status !== "NodeStatusDeleted");
  }, 60_000);

  it("lists every pack once, and Manager's load_nightly and list view read every entry", async () => {
    const list = CustomNodeList.strict().parse((await request(app).get("/channel/custom-node-list.json").expect(200)).body);
    expect(list.custom_nodes).toHaveLength(packs.length);
    expect(new Set(list.custom_nodes.map((e) => e.id)).size).toBe(packs.length);
    const stats = (await request(app).get("/channel/github-stats.json").expect(200)).body;
    const extras = (await request(app).get("/channel/extras.json").expect(200)).body;
    const loaded = managerLoadNightly(list);
    const populated = managerPopulateStats(loaded, stats, extras);
    // Manager keys packs by repository name and id (same-named repositories overwrite each other
    // there); every entry it keeps finds its stars by `reference`, none falls to "unknown" (-1).
    // (Packs sharing a repository share its entry: the most popular one's stars.)
    const starsOf = new Map<string, number[]>();
    for (const p of packs) if (p.repository) starsOf.set(p.repository, [...(starsOf.get(p.repository) ?? []), p.repo_stars ?? 0]);
    expect(loaded.size).toBeGreaterThan(packs.length * 0.9);
    for (const [key, entry] of loaded) if (entry.reference) expect(starsOf.get(entry.reference), key).toContain(populated.get(key)?.stars);
  });

  it("the extension map resolves sampled class names to the repositories of the packs that provide them", async () => {
    const map = (await request(app).get("/channel/extension-node-map.json").expect(200)).body;
    const random = seeded(24);
    const withClasses = packs.filter((p) => p.repository && (p.app_node_names?.length ?? 0) > 0);
    expect(withClasses.length).toBeGreaterThan(100);
    const sample = Array.from({ length: 300 }, () => {
      const p = withClasses[Math.floor(random() * withClasses.length)]!;
      return { pack: p, name: p.app_node_names![Math.floor(random() * p.app_node_names!.length)]! };
    });
    const resolved = managerMissingNodePacks(
      map,
      sample.map((s) => s.name),
    );
    for (const { pack, name } of sample) {
      expect(resolved.get(name), `${name} of ${pack.id}`).toContain(pack.repository);
    }
    const providers = (name: string) => packs.filter((p) => p.app_node_names?.includes(name) && p.repository).map((p) => p.repository!);
    for (const { name } of sample.slice(0, 50)) expect(new Set(resolved.get(name))).toEqual(new Set(providers(name)));
  });
});
