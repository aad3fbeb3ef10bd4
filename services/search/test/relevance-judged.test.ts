import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureCatalog, writeCatalogFile } from "@app/testkit/catalog";
import { JUDGED_QUERIES } from "@app/testkit/judged-queries";
import { acceptableIds, firstHit } from "@app/testkit/relevance-metrics";
import { EmbeddedSearchEngine } from "../src/adapters/embedded/embedded-engine.ts";
import { loadCatalog } from "../src/adapters/catalog-source.ts";
import { hyphenatedWords, joinedRuns, nameParts } from "../src/domain/text.ts";

describe("names as they are written", () => {
  it.each([
    ["VideoHelperSuite", ["video", "helper", "suite"]],
    ["ComfyUI-WanVideoWrapper", ["comfyui", "wan", "video", "wrapper"]],
    ["SeedVR2_VideoUpscaler", ["seed", "vr", "2", "video", "upscaler"]],
    ["ComfyUI_IPAdapter_plus", ["comfyui", "ip", "adapter", "plus"]],
    ["comfyui-kjnodes", ["comfyui", "kjnodes"]],
    ["Hunyuan3D", ["hunyuan", "3", "d"]],
  ])("%s splits into %j", (name, parts) => {
    expect(nameParts(name)).toEqual(parts);
  });
  it("joins runs of two to four neighbouring words, so a name typed as one word is found; none starts with the application name", () => {
    expect(joinedRuns(["video", "helper", "suite"])).toEqual(["videohelper", "videohelpersuite", "helpersuite"]);
    expect(joinedRuns(["comfyui", "wan", "video", "wrapper"])).toEqual(["wanvideo", "wanvideowrapper", "videowrapper"]);
    expect(joinedRuns(nameParts("ComfyUI Easy Use"))).toContain("easyuse");
    expect(joinedRuns(nameParts("Hunyuan3D"))).toContain("3d");
  });
  it("reads hyphenated words in running text as one word too", () => {
    expect(hyphenatedWords("Provides lip-sync and image-to-3D; plain words stay out")).toEqual(["lipsync", "imageto3d"]);
  });
});

describe("the judged set's examples (issue 26) on the repository's fixture", () => {
  const engine = new EmbeddedSearchEngine();
  let dir: string;
  let packs: { id: string }[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "judged-"));
    const file = join(dir, "fixture.ndjson");
    writeCatalogFile(file, fixtureCatalog());
    const { records } = await loadCatalog(file);
    packs = records;
    await engine.replaceAll(records);
  }, 60_000);
  afterAll(async () => {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  });
  const examples = JUDGED_QUERIES.filter((q) => q.popular && fixtureCatalog().some((n) => n.id === q.popular));
  it("the fixture carries the examples", () => {
    expect(examples.map((q) => q.q)).toEqual(
      expect.arrayContaining([
        "video helper",
        "video helper suite",
        "wanvideo",
        "remove background",
        "video upscale",
        "image to 3d",
        "lip sync",
        "text to speech",
      ]),
    );
  });
  it.each(examples.map((q) => [q.q, q.popular!] as const))("%s puts %s in the top three", async (q, pack) => {
    const top = (await engine.search({ search: q, includeBanned: false, offset: 0, limit: 10 })).nodes.map((n) => n.id);
    const rank = firstHit(top, new Set([pack]));
    expect(rank, `top: ${top.slice(0, 5).join(", ")}`).toBeGreaterThanOrEqual(1);
    expect(rank).toBeLessThanOrEqual(3);
  });
  it("a word-for-word name on an unknown pack still comes right after, not nowhere", async () => {
    const top = (await engine.search({ search: "remove background", includeBanned: false, offset: 0, limit: 5 })).nodes.map((n) => n.id);
    expect(top).toEqual(expect.arrayContaining(["comfyui-rmbg", "comfyui-remove-background"]));
  });
  it("every judged query whose packs the fixture holds finds one of them in the top ten", async () => {
    const names = JUDGED_QUERIES.filter((q) => ["name", "partial", "class", "author", "typo"].includes(q.kind));
    for (const q of names) {
      const ok = acceptableIds(q, packs);
      if (ok.size === 0) continue;
      const top = (await engine.search({ search: q.q, includeBanned: false, offset: 0, limit: 10 })).nodes.map((n) => n.id);
      expect(firstHit(top, ok), `${q.q}: ${top.slice(0, 3).join(", ")}`).toBeGreaterThanOrEqual(1);
    }
  });
});
