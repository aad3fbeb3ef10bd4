import { describe, expect, it } from "vitest";
import { exactKey, meiliUid, sameStemIdentityWords, toMeiliDocument } from "../src/adapters/meilisearch/documents.ts";
import { idsFilter, lookupFilters, planMeiliQuery, quote, sliceSegments } from "../src/adapters/meilisearch/query.ts";
import { MEILI_SETTINGS } from "../src/adapters/meilisearch/settings.ts";
import { passesPlatformFilter } from "../src/domain/platform-values.ts";

const q = (over = {}) => ({ includeBanned: false, offset: 0, limit: 10, ...over });

describe("Meilisearch documents", () => {
  it("carry the catalog's identity words of the same stem, so the same word's other form is whole there too", () => {
    const packs = [
      { id: "exact-unknown", name: "Delta Upscale Tool" },
      { id: "prefix-popular", name: "Delta Upscaler Tool" },
      { id: "impactframes-llm", name: "IF_LLM" },
      { id: "impact-pack", name: "Impact Pack" },
    ];
    const sameStem = sameStemIdentityWords(packs);
    const words = (i: number) => toMeiliDocument(packs[i]!, i, 0, sameStem).identity_text.split(" ");
    expect(words(1)).toContain("upscale");
    expect(words(0)).toContain("upscaler");
    // A longer word that merely begins so stays a part: `impact` stays a prefix of `impactframes`.
    expect(words(2)).not.toContain("impact");
    expect(words(3)).not.toContain("impactframes");
  });

  it("carry the node, its popularity rank, its tiers of text and every filter value", () => {
    const doc = toMeiliDocument(
      {
        id: "comfyui-impact-pack",
        name: "ComfyUI Impact Pack",
        description: "Détailers",
        author: "Dr.Lt.Data",
        publisher: { id: "ltdrdata", name: "Dr.Lt.Data" },
        tags: ["Face"],
        app_node_names: ["FaceDetailer"],
        repository: "https://www.github.com/ltdrdata/ComfyUI-Impact-Pack.git",
        status: "NodeStatusBanned",
        supported_os: ["Windows :: 11", "OS Independent"],
        supported_accelerators: ["CUDA"],
      },
      7,
    );
    expect(doc).toMatchObject({
      uid: meiliUid("comfyui-impact-pack"),
      rank: 7,
      banned: true,
      identity_text: "comfyui impact pack impactpack",
      nodes_tags_text: "facedetailer face detailer face",
      description_text: "detailers",
      author_text: "dr lt data ltdrdata dr lt data",
      identity: ["comfyui impact pack"],
      app_names_lower: ["facedetailer"],
      repo_norm: "github.com/ltdrdata/comfyui-impact-pack",
      os_any: true,
      os_prefixes: ["microsoft", "microsoft :: windows", "microsoft :: windows :: 11", "os independent"],
      os_values: ["microsoft :: windows :: 11", "os independent"],
      acc_any: false,
      acc_prefixes: ["gpu", "gpu :: nvidia cuda"],
      acc_values: ["gpu :: nvidia cuda"],
    });
    expect(doc.record.id).toBe("comfyui-impact-pack");
  });

  it("ids become valid Meilisearch ids, one-to-one", () => {
    const ids = ["a", "a/b", "a b", "ü", "a.b", "A"];
    const uids = ids.map(meiliUid);
    for (const u of uids) expect(u).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(new Set(uids).size).toBe(ids.length);
  });

  it("an empty platform list is open to every filter", () => {
    expect(toMeiliDocument({ id: "x" }, 0)).toMatchObject({ os_any: true, acc_any: true, os_prefixes: [], acc_values: [] });
  });
});

describe("Meilisearch query translation", () => {
  it("escapes filter values", () => {
    expect(quote('a"b\\c')).toBe('"a\\"b\\\\c"');
  });

  it("without search: popularity sort, banned filtered out", () => {
    expect(planMeiliQuery(q())).toEqual({ q: "", base: ["banned = false"], segments: [[]], sort: ["rank:asc"], empty: false });
    expect(planMeiliQuery(q({ includeBanned: true })).base).toEqual([]);
  });

  it("search: normalised tokens, the exact id/name segment first", () => {
    const plan = planMeiliQuery(q({ search: "ComfyUI_KJNodes" }));
    expect(plan.q).toBe("comfyui kjnodes");
    expect(plan.sort).toBeUndefined();
    expect(plan.segments).toEqual([['identity = "comfyui kjnodes"'], ['NOT identity = "comfyui kjnodes"']]);
    expect(planMeiliQuery(q({ search: "--" })).empty).toBe(true);
  });

  it("app node search: whole names, then partial ones, each split by the exact rule", () => {
    const plan = planMeiliQuery(q({ appNode: "FaceDetailer", search: "impact" }));
    expect(plan.segments).toEqual([
      ['app_names_lower = "facedetailer"', 'identity = "impact"'],
      ['app_names_lower = "facedetailer"', 'NOT identity = "impact"'],
      ['app_names_lower CONTAINS "facedetailer"', 'NOT app_names_lower = "facedetailer"', 'identity = "impact"'],
      ['app_names_lower CONTAINS "facedetailer"', 'NOT app_names_lower = "facedetailer"', 'NOT identity = "impact"'],
    ]);
  });

  it("repository and platform filters", () => {
    const plan = planMeiliQuery(q({ repositoryUrl: "https://GitHub.com/Kijai/ComfyUI-KJNodes.git/", os: "Windows", accelerator: "gpu" }));
    expect(plan.base).toEqual([
      "banned = false",
      '(os_any = true OR os_prefixes = "microsoft :: windows" OR os_values IN ["microsoft", "microsoft :: windows"])',
      '(acc_any = true OR acc_prefixes = "gpu" OR acc_values IN ["gpu"])',
      'repo_norm CONTAINS "github.com/kijai/comfyui-kjnodes"',
    ]);
  });

  it("the path filter's translation agrees with the embedded rule on every pair of a value set", () => {
    const values = ["Microsoft :: Windows", "Microsoft :: Windows :: 10", "POSIX :: Linux", "MacOS", "OS Independent", "Windows", "Linux"];
    const filters = [
      "Windows",
      "Microsoft",
      "Microsoft :: Windows :: 11",
      "Microsoft :: Windows :: 10",
      "Linux",
      "POSIX",
      "macOS",
      "Solaris",
    ];
    for (const v of values) {
      const doc = toMeiliDocument({ id: "x", supported_os: [v] }, 0);
      for (const f of filters) {
        const plan = planMeiliQuery(q({ os: f }));
        const clause = plan.base[1]!;
        // Evaluate the clause against the document the way Meilisearch would.
        const quoted = [...clause.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
        const [prefix, ...ancestors] = quoted;
        const meili = doc.os_any || doc.os_prefixes.includes(prefix!) || doc.os_values.some((x) => ancestors.includes(x));
        expect(meili, `${v} vs ${f}`).toBe(passesPlatformFilter([v], f, "os"));
      }
    }
  });
});

describe("the registry read routes' lookups on Meilisearch", () => {
  it("documents carry the lower-cased id and exact keys of the id, the class names (provided and preempted) and the publisher", () => {
    const doc = toMeiliDocument(
      { id: "ComfyUI-X", app_node_names: ["A", "B"], preempted_app_node_names: ["B", "C"], publisher: { id: "pub" } },
      0,
    );
    expect(doc).toMatchObject({
      id_lower: "comfyui-x",
      id_key: exactKey("ComfyUI-X"),
      class_keys: ["A", "B", "C"].map(exactKey),
      publisher_key: exactKey("pub"),
    });
    expect(toMeiliDocument({ id: "bare" }, 0)).toMatchObject({ id_lower: "bare", class_keys: [], publisher_key: "" });
  });
  it("exact keys tell apart what differs only by case, and are what a case-blind comparison cannot confuse", () => {
    expect(exactKey("SAMLoader")).not.toBe(exactKey("samloader"));
    expect(exactKey("SAMLoader")).toBe(exactKey("SAMLoader").toLowerCase());
    expect(exactKey("Ünïcode")).toMatch(/^[0-9a-f]+$/);
  });
  it("node_id and the lookups filter on those fields, quoted", () => {
    expect(idsFilter(["a", 'we"ird'])).toBe(`id_key IN [${quote(exactKey("a"))}, ${quote(exactKey('we"ird'))}]`);
    expect(planMeiliQuery(q({ ids: ["a"] })).base).toEqual(["banned = false", idsFilter(["a"])]);
    expect(lookupFilters.lowerId("ComfyUI-X")).toEqual(['id_lower = "comfyui-x"']);
    expect(lookupFilters.providersOf("SAMLoader")).toEqual([`class_keys = "${exactKey("SAMLoader")}"`, "banned = false"]);
    expect(lookupFilters.publishedBy("pub", true)).toEqual([`publisher_key = "${exactKey("pub")}"`]);
    expect(lookupFilters.publishedBy("pub", false)).toEqual([`publisher_key = "${exactKey("pub")}"`, "banned = false"]);
  });
  it("the settings make each of those fields filterable", () => {
    for (const f of ["id_lower", "id_key", "class_keys", "publisher_key"]) expect(MEILI_SETTINGS.filterableAttributes).toContain(f);
  });
});

describe("paging across segments", () => {
  it.each([
    [
      [5, 20],
      0,
      10,
      [
        { segment: 0, offset: 0, limit: 5 },
        { segment: 1, offset: 0, limit: 5 },
      ],
    ],
    [[5, 20], 10, 10, [{ segment: 1, offset: 5, limit: 10 }]],
    [
      [0, 3, 4],
      2,
      3,
      [
        { segment: 1, offset: 2, limit: 1 },
        { segment: 2, offset: 0, limit: 2 },
      ],
    ],
    [[5, 20], 30, 10, []],
  ])("totals %j, offset %i, limit %i", (totals, offset, limit, expected) => {
    expect(sliceSegments(totals, offset, limit)).toEqual(expected);
  });
});

describe("Meilisearch documents carry the words names are written in", () => {
  it("split by case and digits, joined runs of the name, hyphenated words of the description, and the popularity figure", () => {
    const doc = toMeiliDocument(
      {
        id: "vhs",
        name: "ComfyUI-VideoHelperSuite",
        repository: "https://github.com/Kosinkadink/ComfyUI-VideoHelperSuite",
        description: "Lip-sync and video tools",
        author: "Kosinkadink",
      },
      3,
      0.8,
    );
    const words = doc.identity_text.split(" ");
    for (const w of ["vhs", "comfyui", "videohelpersuite", "video", "helper", "suite", "videohelper", "helpersuite"])
      expect(words).toContain(w);
    expect(doc.description_text.split(" ")).toEqual(["lip", "sync", "and", "video", "tools", "lipsync"]);
    expect(doc).toMatchObject({ rank: 3, popularity: 0.8, author_text: "kosinkadink" });
  });
});

describe("Meilisearch settings", () => {
  it("synonyms: the words for a need also search its abbreviation; stop words are English filler only, never the ecosystem's", () => {
    expect(MEILI_SETTINGS.synonyms).toMatchObject({ "remove background": ["rmbg"], "text to speech": ["tts"], "image to video": ["i2v"] });
    expect(MEILI_SETTINGS.stopWords).toContain("the");
    for (const w of ["comfyui", "nodes", "node", "pack", "custom"]) expect(MEILI_SETTINGS.stopWords).not.toContain(w);
  });

  it("search the four fields in their order of meaning, with our typo thresholds, exactness before popularity and popularity order last", () => {
    expect(MEILI_SETTINGS.searchableAttributes).toEqual(["identity_text", "nodes_tags_text", "description_text", "author_text"]);
    expect(MEILI_SETTINGS.rankingRules).toEqual([
      "words",
      "typo",
      "proximity",
      "attribute",
      "exactness",
      "popularity:desc",
      "sort",
      "rank:asc",
    ]);
    expect(MEILI_SETTINGS.typoTolerance).toMatchObject({ enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 } });
    expect(MEILI_SETTINGS.rankingRules?.at(-1)).toBe("rank:asc");
    expect(MEILI_SETTINGS.sortableAttributes).toContain("rank");
    for (const f of [
      "banned",
      "identity",
      "app_names_lower",
      "repo_norm",
      "os_any",
      "os_prefixes",
      "os_values",
      "acc_any",
      "acc_prefixes",
      "acc_values",
    ]) {
      expect(MEILI_SETTINGS.filterableAttributes).toContain(f);
    }
  });
});
