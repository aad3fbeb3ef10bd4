import { parse as parseQueryString } from "node:querystring";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SearchQueryParams } from "@app/contracts";
import { fastSearchQuery } from "../src/fast/query-fast.ts";
import { parseSearchQuery } from "../src/domain/query.ts";

const KEYS = [
  "page",
  "limit",
  "search",
  "repository_url_search",
  "app_node_search",
  "supported_os",
  "supported_accelerator",
  "include_banned",
  "latest",
  "comfyui_version",
  "form_factor",
  "node_id",
  "sort",
  "timestamp",
  "comfy_node_search",
  "foo",
  "page[x]",
  "__proto__",
  "constructor",
  "Search",
];
const VALUES = [
  "",
  "0",
  "1",
  "01",
  "000000001",
  "9",
  "10",
  "99",
  "100",
  "101",
  "123456789",
  "1234567890",
  "-1",
  "1.5",
  "1e2",
  " 1",
  "1 ",
  "+1",
  "%31",
  "٣",
  "true",
  "false",
  "TRUE",
  "yes",
  "c",
  "co",
  "controlnet",
  "impact pack",
  "  padded  ",
  "+plus+",
  "%20",
  "%E2%80%A8x",
  "%C2%A0",
  "%EF%BB%BF",
  "%",
  "%zz",
  "%E9",
  "a%26b",
  "Windows",
  "CUDA",
  "日本語",
  "x".repeat(512),
  "x".repeat(513),
  ` ${"y".repeat(511)}`,
  "\u3000".repeat(3),
];

/** Query strings: mostly known keys with plausible values, sometimes repeated, unknown or malformed. */
const queryStrings = fc
  .array(
    fc.tuple(
      fc.constantFrom(...KEYS),
      fc.oneof(fc.constantFrom(...VALUES), fc.string({ maxLength: 12 }), fc.stringMatching(/^[0-9]{0,11}$/)),
    ),
    { maxLength: 6 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${/%/.test(v) ? v : encodeURIComponent(v)}`).join("&"));

const zod = (raw: Record<string, unknown>) => SearchQueryParams.safeParse(raw);

describe("the search query's fast path", () => {
  it("gives exactly zod's output (values, keys and their order) wherever it answers", () => {
    let answered = 0;
    fc.assert(
      fc.property(queryStrings, (qs) => {
        const raw = parseQueryString(qs);
        const fast = fastSearchQuery(raw);
        if (fast === undefined) return;
        answered++;
        const ref = zod(raw);
        expect(ref.success, qs).toBe(true);
        expect(fast, qs).toStrictEqual(ref.data);
        expect(Object.keys(fast), qs).toEqual(Object.keys(ref.data!));
      }),
      { numRuns: 20_000 },
    );
    expect(answered).toBeGreaterThan(1_000);
  });

  it("answers the common shapes itself", () => {
    for (const qs of [
      "",
      "search=impact%20pack",
      "search=c&limit=20&page=3&supported_os=Windows&supported_accelerator=CUDA",
      "app_node_search=Face",
      "page=2&limit=10",
      "include_banned=true&latest=false&comfyui_version=0.3.1&form_factor=desktop",
    ]) {
      expect(fastSearchQuery(parseQueryString(qs)), qs).toStrictEqual(zod(parseQueryString(qs)).data);
    }
  });

  it("leaves everything unusual to zod, so its messages stay the schema's", () => {
    for (const qs of [
      "search=a&search=b",
      "node_id=x",
      "sort=id",
      "page=0",
      "limit=101",
      "include_banned=1",
      "foo=bar",
      `search=${"x".repeat(513)}`,
    ]) {
      expect(fastSearchQuery(parseQueryString(qs)), qs).toBeUndefined();
    }
    expect(parseSearchQuery(parseQueryString("limit=101&page=x"))).toEqual({
      ok: false,
      message: zod({ limit: "101", page: "x" })
        .error!.issues.map((i) => i.message)
        .join("; "),
    });
  });

  it("parseSearchQuery gives zod's answer on any query string, the comfy_node_search alias included", () => {
    fc.assert(
      fc.property(queryStrings, (qs) => {
        const raw = parseQueryString(qs);
        const got = parseSearchQuery(raw);
        if (raw.comfy_node_search !== undefined) return; // the alias is checked before the schema, as before
        const ref = zod(raw);
        expect(got, qs).toStrictEqual(
          ref.success ? { ok: true, query: ref.data } : { ok: false, message: ref.error.issues.map((i) => i.message).join("; ") },
        );
      }),
      { numRuns: 5_000 },
    );
  });
});
