import { describe, expect, it } from "vitest";
import { BoundedMemo, memoLookups } from "../src/fast/bounded-memo.ts";
import { SeenBefore } from "../src/fast/seen-before.ts";

const byLength = (v: number[]) => v.length;

/** Ask until the memo has remembered the key (the first request only marks it as seen). */
function remember<V>(memo: BoundedMemo<V>, key: string, compute: () => V): void {
  memo.getOrCompute(key, compute);
  memo.getOrCompute(key, compute);
}

describe("BoundedMemo", () => {
  it("remembers a key from its second request on, and answers the remembered value after", () => {
    const memo = new BoundedMemo("test", byLength);
    let calls = 0;
    const compute = () => {
      calls++;
      return [1, 2];
    };
    expect(memo.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(calls).toBe(1);
    expect(memo.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(calls).toBe(2);
    expect(memo.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(memo.getOrCompute("a", compute)).toEqual([1, 2]);
    expect(calls).toBe(2);
  });

  it("remembers keep's copy, not the computed value, and copies only what it remembers", () => {
    const memo = new BoundedMemo("test", byLength);
    const scratch = [1, 2];
    let copies = 0;
    const keep = (v: number[]) => {
      copies++;
      return [...v];
    };
    expect(memo.getOrCompute("a", () => scratch, keep)).toBe(scratch); // asked once: not copied
    expect(copies).toBe(0);
    const kept = memo.getOrCompute("a", () => scratch, keep);
    expect(kept).not.toBe(scratch);
    expect(copies).toBe(1);
    scratch[0] = 9; // the scratch space is reused by the next computation
    expect(memo.getOrCompute("a", () => scratch, keep)).toEqual([1, 2]);
  });

  it("keys asked once are never remembered, however many there are", () => {
    const memo = new BoundedMemo("test", byLength);
    let calls = 0;
    for (let i = 0; i < 1000; i++)
      memo.getOrCompute(`k${i}`, () => {
        calls++;
        return [i];
      });
    memo.getOrCompute("k1", () => {
      calls++;
      return [1];
    });
    expect(calls).toBe(1001);
  });

  it("drops everything when the entry or weight bound would be passed, and never keeps an oversized value", () => {
    const memo = new BoundedMemo("test", byLength, 2, 10);
    let calls = 0;
    const compute = (n: number) => () => {
      calls++;
      return new Array<number>(n).fill(0);
    };
    remember(memo, "a", compute(4));
    remember(memo, "b", compute(4));
    expect(calls).toBe(4);
    memo.getOrCompute("a", compute(4));
    expect(calls).toBe(4); // remembered
    remember(memo, "c", compute(4)); // over both bounds: a and b forgotten
    memo.getOrCompute("a", compute(4));
    expect(calls).toBe(7);
    remember(memo, "huge", compute(11));
    memo.getOrCompute("huge", compute(11));
    expect(calls).toBe(10);
  });

  it("weighs by key when asked, so long keys count against the bound", () => {
    const memo = new BoundedMemo("test", (_v: number, key) => key.length, 100, 8);
    let calls = 0;
    const compute = () => {
      calls++;
      return 1;
    };
    remember(memo, "x".repeat(9), compute);
    memo.getOrCompute("x".repeat(9), compute);
    expect(calls).toBe(3);
    remember(memo, "x".repeat(8), compute);
    memo.getOrCompute("x".repeat(8), compute);
    expect(calls).toBe(5);
  });

  it("counts hits and misses under its name, summed over every memo of that name", () => {
    const a = new BoundedMemo("counted", byLength);
    const b = new BoundedMemo("counted", byLength);
    remember(a, "k", () => [1]);
    a.getOrCompute("k", () => [1]);
    b.getOrCompute("k", () => [1]);
    expect(memoLookups().get("counted")).toEqual({ hits: 1, misses: 3 });
  });
});

describe("SeenBefore", () => {
  it("says no the first time a key is offered and yes after, and forgets everything once full", () => {
    const seen = new SeenBefore(16, 100);
    expect(seen.offer("controlnet")).toBe(false);
    expect(seen.offer("controlnet")).toBe(true);
    expect(seen.offer("controlnex")).toBe(false);
    let falsePositives = 0;
    for (let i = 0; i < 98; i++) if (seen.offer(`key ${i}`)) falsePositives++;
    expect(falsePositives).toBeLessThan(5);
    expect(seen.offer("controlnet")).toBe(true); // 100 keys offered: still remembered
    seen.offer("one more"); // the 101st key starts over
    expect(seen.offer("controlnet")).toBe(false);
  });
});
