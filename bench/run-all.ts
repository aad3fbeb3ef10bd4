import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@app/testkit/processes";

/**
 * `pnpm bench`: every benchmark, one after the other (they would disturb each other in
 * parallel on a 2-core machine), each reporting its figures against a baseline measured in
 * the same run. Results go to stdout and bench/results/latest.json.
 * `pnpm bench <name>` runs only the benchmarks whose file name contains <name>.
 */
const benches = ["search-inprocess.ts", "relevance.ts", "gateway-search-http.ts", "gateway-first-sight.ts", "gateway-registry-reads.ts", "gateway-asset-head.ts", "asset-list.ts", "asset-store-event-loop.ts", "asset-upload-1gb.ts", "tus-upload-1gb.ts", "asset-download-1gb.ts", "upload-throughput.ts", "mask-derive.ts", "catalog-mirror.ts", "archive-pull-through.ts"];
const only = process.argv[2];
const results: Record<string, unknown> = {};
const summaries: string[] = [];
for (const file of benches) {
  if (only && !file.includes(only)) continue;
  const path = join(repoRoot, "bench", file);
  if (!existsSync(path)) continue;
  console.log(`\n== ${file}`);
  const mod = (await import(path)) as { run: () => Promise<{ summary?: string[] }> };
  const figures = await mod.run();
  results[file] = figures;
  console.log(JSON.stringify(figures, null, 2));
  summaries.push(...(figures.summary ?? []));
}
// The one-line figures of the benches that have them, together at the end.
if (summaries.length > 0) console.log(`\n${summaries.join("\n")}`);
mkdirSync(join(repoRoot, "bench/results"), { recursive: true });
writeFileSync(join(repoRoot, "bench/results/latest.json"), JSON.stringify({ at: new Date().toISOString(), results }, null, 2));
process.exit(0);
