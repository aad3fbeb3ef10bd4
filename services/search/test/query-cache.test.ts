import { describe, expect, it } from "vitest";
import { QueryCache } from "../src/adapters/embedded/query-cache.ts";

describe("QueryCache", () => {
  it("computes once per key and answers the remembered value after", () => {
    const cache = new QueryCache();
    let calls = 0;
    const compute = () => { calls++; return [1, 2]; };
    expect(cache.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(cache.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(calls).toBe(1);
  });

  it("drops everything when the entry or size bound would be passed, and never keeps an oversized value", () => {
    const cache = new QueryCache(2, 10);
    let calls = 0;
    const compute = (n: number) => () => { calls++; return new Array<number>(n).fill(0); };
    cache.getOrCompute("a", compute(4));
    cache.getOrCompute("b", compute(4));
    cache.getOrCompute("c", compute(4)); // over both bounds: a and b forgotten
    cache.getOrCompute("a", compute(4));
    expect(calls).toBe(4);
    cache.getOrCompute("huge", compute(11));
    cache.getOrCompute("huge", compute(11));
    expect(calls).toBe(6);
  });
});
