import { existsSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@app/testkit/processes";
import { writeBenchmarksMd } from "./lib/benchmarks-table.ts";
import { measure, type BenchOutput } from "./lib/results.ts";

/**
 * `pnpm bench`: every benchmark, one after the other (in parallel they would disturb each other
 * on a small machine), each against a baseline measured in the same run and written to
 * bench/results/<bench>.json; then BENCHMARKS.md is regenerated from every file there.
 * `pnpm bench <name>` runs only the benches whose file name contains <name>.
 * `pnpm bench --table` runs nothing and only regenerates BENCHMARKS.md.
 */
const benches = [
  "search-inprocess",
  "relevance",
  "gateway-search-http",
  "gateway-first-sight",
  "gateway-registry-reads",
  "gateway-asset-head",
  "asset-list",
  "asset-store-event-loop",
  "asset-upload-1gb",
  "tus-upload-1gb",
  "asset-download-1gb",
  "upload-throughput",
  "mask-derive",
  "catalog-mirror",
  "archive-pull-through",
  "hand-paths-ab",
];
const arg = process.argv[2];
const summaries: string[] = [];
if (arg !== "--table") {
  for (const bench of benches) {
    if (arg && !bench.includes(arg)) continue;
    const path = join(repoRoot, "bench", `${bench}.ts`);
    if (!existsSync(path)) continue;
    console.log(`\n== ${bench}`);
    const mod = (await import(path)) as { run: () => Promise<BenchOutput> };
    const result = await measure(bench, async () => {
      const output = await mod.run();
      summaries.push(...output.summary);
      return output;
    });
    console.log(JSON.stringify(result, null, 2));
  }
}
// The one-line figures of the benches, together at the end.
if (summaries.length > 0) console.log(`\n${summaries.join("\n")}`);
writeBenchmarksMd();
console.log("\nBENCHMARKS.md regenerated from bench/results/");
process.exit(0);
