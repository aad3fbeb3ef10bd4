import { describe, expect, it } from "vitest";
import type { StoredNode } from "../src/domain/catalog-record.ts";
import { EmbeddedSearchEngine } from "../src/adapters/embedded/embedded-engine.ts";
import { describeEngineConformance } from "./engine-conformance.ts";

describeEngineConformance("embedded", () => new EmbeddedSearchEngine());

const node = (id: string, name: string): StoredNode => ({ id, name, status: "NodeStatusActive", repo_stars: 1 });

// Rules of the embedded engine that Meilisearch, which reads every word with typos, does not share (README: "Meilisearch").
describe("embedded engine: the word being typed", () => {
  it("is read with typos only when no term starts with it", async () => {
    const engine = new EmbeddedSearchEngine();
    await engine.replaceAll([node("sampler-kit", "Sampler Kit"), node("sample-images", "Sample Images"), node("detailer", "Detailer Tools")]);
    const ids = async (search: string) => (await engine.search({ search, includeBanned: false, offset: 0, limit: 10 })).nodes.map((n) => n.id);
    // `sampler` starts a term: its completions answer, not `sample`, one edit away.
    expect(await ids("sampler")).toEqual(["sampler-kit"]);
    // `samplr` and `detailr` start none: their typos answer.
    expect(await ids("samplr")).toEqual(expect.arrayContaining(["sampler-kit", "sample-images"]));
    expect(await ids("detailr")).toEqual(["detailer"]);
    // A word before the last is always read with typos.
    expect(await ids("sampler tools")).toEqual(expect.arrayContaining(["sampler-kit", "sample-images", "detailer"]));
  });
});
