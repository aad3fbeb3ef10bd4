import { describe, expect, it } from "vitest";
import { BoundedMemo, memoLookups } from "../src/domain/bounded-memo.ts";

const byLength = (v: number[]) => v.length;

describe("BoundedMemo", () => {
  it("computes once per key and answers the remembered value after", () => {
    const memo = new BoundedMemo("test", byLength);
    let calls = 0;
    const compute = () => { calls++; return [1, 2]; };
    expect(memo.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(memo.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(calls).toBe(1);
  });

  it("drops everything when the entry or weight bound would be passed, and never keeps an oversized value", () => {
    const memo = new BoundedMemo("test", byLength, 2, 10);
    let calls = 0;
    const compute = (n: number) => () => { calls++; return new Array<number>(n).fill(0); };
    memo.getOrCompute("a", compute(4));
    memo.getOrCompute("b", compute(4));
    memo.getOrCompute("c", compute(4)); // over both bounds: a and b forgotten
    memo.getOrCompute("a", compute(4));
    expect(calls).toBe(4);
    memo.getOrCompute("huge", compute(11));
    memo.getOrCompute("huge", compute(11));
    expect(calls).toBe(6);
  });

  it("weighs by key when asked, so long keys count against the bound", () => {
    const memo = new BoundedMemo("test", (_v: number, key) => key.length, 100, 8);
    let calls = 0;
    const compute = () => { calls++; return 1; };
    memo.getOrCompute("x".repeat(9), compute);
    memo.getOrCompute("x".repeat(9), compute);
    expect(calls).toBe(2);
  });

  it("counts hits and misses under its name, summed over every memo of that name", () => {
    const a = new BoundedMemo("counted", byLength);
    const b = new BoundedMemo("counted", byLength);
    a.getOrCompute("k", () => [1]);
    a.getOrCompute("k", () => [1]);
    b.getOrCompute("k", () => [1]);
    expect(memoLookups().get("counted")).toEqual({ hits: 1, misses: 2 });
  });
});
