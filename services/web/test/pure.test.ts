import { describe, expect, it } from "vitest";
import { boxParams, highlightTerms, looksLikeClassName, parseBox } from "../src/search/box-query.ts";
import { readSearchState, searchHref, toSearchParams } from "../src/search/search-state.ts";
import { LatestRequest } from "../src/ui/latest-request.ts";

describe("the search box", () => {
  it.each([
    ["impact pack", { search: "impact pack" }],
    ["  contrlnet ", { search: "contrlnet" }],
    ["node:FaceDetailer", { app_node_search: "FaceDetailer" }],
    ["Class: SAMLoader", { app_node_search: "SAMLoader" }],
    ["https://github.com/ltdrdata/ComfyUI-Impact-Pack", { repository_url_search: "https://github.com/ltdrdata/ComfyUI-Impact-Pack" }],
    ["github.com/ltdrdata/ComfyUI-Impact-Pack.git", { repository_url_search: "github.com/ltdrdata/ComfyUI-Impact-Pack.git" }],
    ["repo:ltdrdata/ComfyUI-Impact-Pack", { repository_url_search: "ltdrdata/ComfyUI-Impact-Pack" }],
    ["node:", {}],
    ["", {}],
  ])("%j asks for %j", (box, params) => {
    expect(boxParams(parseBox(box))).toEqual(params);
  });

  it("offers a node class search for one CamelCase word, not for plain words", () => {
    expect(looksLikeClassName(parseBox("FaceDetailer"))).toBe(true);
    expect(looksLikeClassName(parseBox("KSamplerAdvanced"))).toBe(true);
    expect(looksLikeClassName(parseBox("impact"))).toBe(false);
    expect(looksLikeClassName(parseBox("Impact Pack"))).toBe(false);
  });

  it("highlights the words as the engine tokenises them (case and accents folded)", () => {
    expect(highlightTerms(parseBox("ComfyUI-Impact_Pack résumé"))).toEqual(["comfyui", "impact", "pack", "resume"]);
    expect(highlightTerms(parseBox("https://github.com/a/b"))).toEqual([]);
  });
});

describe("the search page's URL", () => {
  it("round-trips every part of the state", () => {
    const state = { q: "node:FaceDetailer", os: "macOS", acc: "CUDA", banned: true, limit: 20, page: 3 };
    expect(readSearchState(new URL(searchHref(state), "http://x").searchParams)).toEqual(state);
    expect(searchHref({ q: "", os: "", acc: "", banned: false, limit: 10, page: 1 })).toBe("/");
  });

  it("falls back to defaults for values a hand-edited URL gets wrong", () => {
    expect(readSearchState(new URLSearchParams("page=-2&limit=7&banned=yes"))).toMatchObject({ page: 1, limit: 10, banned: false });
  });

  it("maps the state to the API's parameter names", () => {
    expect(toSearchParams({ q: "node:SAMLoader", os: "Linux", acc: "", banned: true, limit: 50, page: 2 })).toEqual({
      app_node_search: "SAMLoader",
      supported_os: "Linux",
      supported_accelerator: undefined,
      include_banned: true,
      page: 2,
      limit: 50,
    });
  });
});

describe("LatestRequest", () => {
  it("a newer request aborts the older one, and the older one's answer is no longer current", () => {
    const latest = new LatestRequest();
    const a = latest.begin();
    const b = latest.begin();
    expect(a.signal.aborted).toBe(true);
    expect(a.current()).toBe(false);
    expect(b.signal.aborted).toBe(false);
    expect(b.current()).toBe(true);
    latest.cancel();
    expect(b.signal.aborted).toBe(true);
    expect(b.current()).toBe(false);
  });
});
