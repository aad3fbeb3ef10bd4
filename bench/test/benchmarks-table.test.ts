import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readResults, renderBenchmarks, writeBenchmarksMd } from "../lib/benchmarks-table.ts";
import { figure, measure, type BenchResult } from "../lib/results.ts";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-table-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const result = (
  bench: string,
  figures = [figure("req/s through the gateway", 17_089, "req/s", { baseline: ["bare Express", 16_426], goal: "ratio ≥ 1.0" })],
): BenchResult => ({
  bench,
  machine: { cpu: "Test CPU @ 2.0GHz", cores: 2, memoryGiB: 7.8, node: "v20.19.0", os: "linux 6.1 x64" },
  date: "2026-01-02T03:04:05.000Z",
  load: { start: [1.25, 1, 1], end: [2.5, 1, 1] },
  figures,
  details: {},
});

describe("figure", () => {
  it("computes the ratio from the baseline unless the bench gives its own", () => {
    expect(figure("x", 3, "s", { baseline: ["b", 2] }).ratio).toBe(1.5);
    expect(figure("x", 3, "s", { baseline: ["b", 2], ratio: 1.234 }).ratio).toBe(1.23);
    expect(figure("x", 3, "s")).toEqual({
      name: "x",
      value: 3,
      unit: "s",
      baselineName: null,
      baselineValue: null,
      ratio: null,
      goal: null,
    });
  });
});

describe("BENCHMARKS.md", () => {
  it("has one row per figure of every result, with baseline, ratio, goal and the run's machine, date and load", () => {
    const md = renderBenchmarks([
      result("gateway-first-sight"),
      result("search-inprocess", [figure("1M-pack index build", 41.8, "s", { goal: "< 60 s" }), figure("memory | index", 377, "MiB")]),
    ]);
    const rows = md.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| bench"));
    expect(rows).toEqual([
      "| gateway-first-sight | req/s through the gateway | 17,089 req/s | bare Express: 16,426 req/s | 1.04 | ratio ≥ 1.0 | 2026-01-02, 2× Test CPU @ 2.0GHz, 7.8 GiB, Node v20.19.0, load 1.3 → 2.5 |",
      "| search-inprocess | 1M-pack index build | 41.8 s | – | – | < 60 s | 2026-01-02, 2× Test CPU @ 2.0GHz, 7.8 GiB, Node v20.19.0, load 1.3 → 2.5 |",
      "| search-inprocess | memory \\| index | 377 MiB | – | – | – | 2026-01-02, 2× Test CPU @ 2.0GHz, 7.8 GiB, Node v20.19.0, load 1.3 → 2.5 |",
    ]);
    expect(md).toContain("| bench | figure | measured | baseline | ratio | goal | run |");
  });

  it("is made from every JSON file in the results folder, in file-name order, skipping files that are not results", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "b.json"), JSON.stringify(result("b")));
    writeFileSync(join(dir, "a.json"), JSON.stringify(result("a")));
    writeFileSync(join(dir, "old.json"), JSON.stringify({ at: "x", results: {} }));
    writeFileSync(join(dir, "notes.txt"), "not a result");
    expect(readResults(dir).map((r) => r.bench)).toEqual(["a", "b"]);
    const target = join(tempDir(), "BENCHMARKS.md");
    writeBenchmarksMd(dir, target);
    const md = readFileSync(target, "utf8");
    expect(md.indexOf("| a |")).toBeGreaterThan(0);
    expect(md.indexOf("| b |")).toBeGreaterThan(md.indexOf("| a |"));
  });

  it("has a header and no rows when there are no results yet", () => {
    expect(readResults(join(tempDir(), "missing"))).toEqual([]);
    expect(renderBenchmarks([]).trimEnd().split("\n").at(-1)).toBe("|---|---|---|---|---|---|---|");
  });
});

describe("measure", () => {
  it("writes <bench>.json with the machine, the date, the load at start and end, the figures and the details", async () => {
    const dir = tempDir();
    const written = await measure(
      "quick",
      async () => ({ figures: [figure("f", 2, "ms", { baseline: ["b", 4], goal: "< 5 ms" })], summary: ["one line"], rounds: [1, 2] }),
      dir,
    );
    const onDisk = JSON.parse(readFileSync(join(dir, "quick.json"), "utf8")) as BenchResult;
    expect(onDisk).toEqual(written);
    expect(onDisk.bench).toBe("quick");
    expect(onDisk.machine.cores).toBeGreaterThan(0);
    expect(onDisk.machine.node).toBe(process.version);
    expect(new Date(onDisk.date).toISOString()).toBe(onDisk.date);
    expect(onDisk.load.start).toHaveLength(3);
    expect(onDisk.load.end).toHaveLength(3);
    expect(onDisk.figures).toEqual([{ name: "f", value: 2, unit: "ms", baselineName: "b", baselineValue: 4, ratio: 0.5, goal: "< 5 ms" }]);
    expect(onDisk.details).toEqual({ rounds: [1, 2] });
    expect(readResults(dir).map((r) => r.bench)).toEqual(["quick"]);
  });
});
