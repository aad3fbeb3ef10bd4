import { describe, expect, it } from "vitest";
import { loadCatalog } from "../src/adapters/catalog-source.ts";
import { resultPage, toApiNode, toApiNodeJson, toPage, toPageJson } from "../src/fast/node-output.ts";
import { testCatalog } from "@app/testkit/catalog";
import { FIXTURES } from "./helpers.ts";

describe("serialised pages", () => {
  it("are byte for byte the JSON of the page object, for fixtures and a whole catalog", async () => {
    const { records } = await loadCatalog(testCatalog().path);
    for (const nodes of [FIXTURES, records.slice(0, 100), [], records.slice(5000, 5001)]) {
      expect(toPageJson(nodes, 1234, 3, 10)).toBe(JSON.stringify(toPage(nodes, 1234, 3, 10)));
    }
    for (const r of [...FIXTURES, ...records.slice(0, 50)]) {
      expect(toApiNodeJson(r)).toBe(JSON.stringify(toApiNode(r)));
    }
  });

  it("carry their UTF-8 length, counted per node (multi-byte text included)", async () => {
    const { records } = await loadCatalog(testCatalog().path);
    const multiByte = FIXTURES.map((r, i) => ({ ...r, description: `${"é日🎉\u2028".repeat(i + 1)} ${r.description ?? ""}` }));
    for (const nodes of [FIXTURES, multiByte, records.slice(0, 100), [], records.slice(5000, 5001)]) {
      for (const [page, limit, total] of [
        [1, 10, 0],
        [3, 20, 1234],
        [600, 1, 99_999],
      ] as const) {
        const text = resultPage({ nodes, total }, page, limit);
        expect(text.json).toBe(JSON.stringify(toPage(nodes, total, page, limit)));
        expect(text.bytes).toBe(Buffer.byteLength(text.json));
      }
    }
  });

  it("answer the same text again for the same record (serialised once)", () => {
    const r = FIXTURES[0]!;
    expect(toApiNodeJson(r)).toBe(toApiNodeJson(r));
    expect(JSON.parse(toPageJson([r], 1, 1, 10))).toEqual({ nodes: [toApiNode(r)], page: 1, limit: 10, total: 1, totalPages: 1 });
  });
});
