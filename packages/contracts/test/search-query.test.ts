import { describe, expect, it } from "vitest";
import { SearchQueryParams } from "../src/index.ts";

const parse = (q: Record<string, unknown>) => SearchQueryParams.safeParse(q);
const message = (q: Record<string, unknown>) => {
  const r = parse(q);
  expect(r.success).toBe(false);
  return r.error!.issues.map((i) => i.message).join("; ");
};

describe("search query parameters", () => {
  it("defaults page 1, limit 10, include_banned false", () => {
    expect(parse({}).data).toMatchObject({ page: 1, limit: 10, include_banned: false });
  });

  it("accepts the bounds and ignores unknown parameters", () => {
    expect(parse({ page: "7", limit: "100", foo: "bar" }).data).toMatchObject({ page: 7, limit: 100 });
    expect(parse({ limit: "1" }).data?.limit).toBe(1);
  });

  it.each([
    [{ page: "0" }, "page"],
    [{ page: "-1" }, "page"],
    [{ page: "1.5" }, "page"],
    [{ page: "abc" }, "page"],
    [{ page: "" }, "page"],
    [{ page: ["1", "2"] }, "page must be given once"],
    [{ limit: "0" }, "limit must be from 1 to 100"],
    [{ limit: "101" }, "limit must be from 1 to 100"],
    [{ limit: "1e2" }, "limit"],
    [{ limit: { a: "1" } }, "limit must be given once"],
    [{ include_banned: "yes" }, "include_banned must be true or false"],
    [{ search: "x".repeat(10_000) }, "search must be at most"],
  ])("refuses %j naming the parameter", (q, expected) => {
    expect(message(q)).toContain(expected);
  });

  it("treats blank keyword parameters as absent", () => {
    expect(parse({ search: "   " }).data?.search).toBeUndefined();
  });
});
