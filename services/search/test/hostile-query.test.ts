import fc from "fast-check";
import request from "supertest";
import type { RequestListener } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { ErrorResponse, SearchPage } from "@app/contracts";
import { createHttpServer } from "@app/platform";
import { loadCatalog } from "../src/adapters/catalog-source.ts";
import { appWith } from "./helpers.ts";
import { testCatalog } from "@app/testkit/catalog";

/**
 * Hostile query strings: whatever arrives, the answer is a 200 page or a 4xx
 * `{error, message}`, never a 500 and never a crash.
 */
let app: RequestListener;
beforeAll(async () => {
  const { records } = await loadCatalog(testCatalog().path);
  ({ app } = await appWith(records));
}, 120_000);

const PARAMS = [
  "page",
  "limit",
  "search",
  "repository_url_search",
  "app_node_search",
  "comfy_node_search",
  "supported_os",
  "supported_accelerator",
  "include_banned",
  "x",
];
const nasty = fc.constantFrom(
  "",
  " ",
  "0",
  "-1",
  "1e3",
  "0x10",
  "1.0",
  "NaN",
  "Infinity",
  "99999999999999999999",
  "true",
  "TRUE",
  "null",
  "[]",
  "{}",
  ".*",
  "(a+)+$",
  "[[:alpha:]]",
  "\\",
  "' OR 1=1 --",
  '"; DROP TABLE nodes; --',
  "%",
  "_",
  "%%",
  "%00",
  "%ZZ",
  "%E0%A4%A",
  "\u0000",
  "\uFFFF",
  "\uD800",
  "🚀🔥",
  "ﬁ",
  "Å",
  "İ",
  "ß",
  "ｆｕｌｌ",
  "a::b",
  " :: ",
  "::",
  "Microsoft :: Windows :: 11",
  "GPU :: ",
  "a".repeat(513),
  "a b ".repeat(200),
  "x".repeat(10_000),
  "impact pack",
  "https://github.com/ltdrdata/ComfyUI-Impact-Pack.git",
  "FaceDetailer",
);
const anyText = fc.oneof(
  nasty,
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
);
const encode = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return s.replace(/[^\w]/g, "%25"); // lone surrogates cannot be encoded: send something odd instead
  }
};
const pair = fc.oneof(
  fc.tuple(fc.constantFrom(...PARAMS), anyText).map(([k, v]) => `${k}=${encode(v)}`),
  fc.tuple(fc.constantFrom(...PARAMS), anyText).map(([k, v]) => `${k}[${encode(v).slice(0, 10)}]=${encode(v)}`),
  fc.tuple(fc.constantFrom(...PARAMS), nasty).map(([k, v]) => `${k}=${v.slice(0, 200)}`.replace(/[\s#]/g, "+")),
  fc.constantFrom(...PARAMS),
  fc.constantFrom("&", "=", "==", "&&", "?", "%", "a=%", "page=%ZZ", "search=%00", "limit=1&limit=1"),
);
const queryString = fc.array(pair, { minLength: 0, maxLength: 6 }).map((ps) => ps.join("&"));

describe("hostile query strings", () => {
  it("a query string past Node's header limit: 431 in shape, not a bare status line", async () => {
    const long = "x".repeat(9_000);
    const res = await request(createHttpServer(app)).get(`/nodes/search?page=${long}&page=${long}`);
    expect(res.status).toBe(431);
    expect(ErrorResponse.parse(res.body).error).toBe("header_too_large");
  });

  it.each([["/nodes/search"], ["/nodes"]])(
    "%s: at least 1,000 generated cases, each a 200 page or a 4xx {error, message}",
    async (path) => {
      let cases = 0;
      await fc.assert(
        fc.asyncProperty(queryString, async (qs) => {
          cases++;
          // Through the services' own HTTP server: a query string past Node's 16 KiB header limit is
          // refused by its parser before any route, and must still answer in shape.
          const res = await request(createHttpServer(app)).get(`${path}?${qs}`);
          if (res.status === 200) {
            SearchPage.parse(res.body);
          } else {
            expect(res.status, `${qs} → ${res.status} ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
            expect(res.status).toBeLessThan(500);
            // The parser's answer carries the upload face's `code` beside `error`: no route was chosen.
            (res.status === 431 ? ErrorResponse : ErrorResponse.strict()).parse(res.body);
          }
        }),
        { numRuns: 1000 },
      );
      expect(cases).toBeGreaterThanOrEqual(1000);
    },
    300_000,
  );

  it("node ids of every kind: 200, 404 or 400, never 500", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyText, nasty), async (id) => {
        const res = await request(app).get(`/nodes/${encode(id) || "%20"}`);
        expect([200, 400, 404]).toContain(res.status);
        if (res.status !== 200) ErrorResponse.strict().parse(res.body);
      }),
      { numRuns: 300 },
    );
  }, 120_000);
});
