import { mkdirSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, platform, release, totalmem } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot } from "@app/testkit/processes";

/**
 * What every bench writes to bench/results/<bench>.json, and what BENCHMARKS.md is made from.
 * A figure is read against a baseline measured in the same run, because the machine's other
 * work moves absolute figures far more than it moves ratios.
 */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  baselineName: string | null;
  baselineValue: number | null;
  /** value / baseline, or the median of the rounds' ratios when the bench alternates rounds. */
  ratio: number | null;
  /** The target, as a reader checks it: "ratio ≥ 0.9", "< 60 s". */
  goal: string | null;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  os: string;
}

export interface BenchResult {
  bench: string;
  machine: Machine;
  /** ISO 8601, when the bench started. */
  date: string;
  /** os.loadavg() at the start and at the end of the bench: how much else the machine was doing. */
  load: { start: number[]; end: number[] };
  figures: Figure[];
  /** Everything else the bench reports (rounds, latencies, RSS), as it returned it. */
  details: Record<string, unknown>;
}

/** What a bench's `run()` returns: its figures for the table and its console lines, beside any details. */
export interface BenchOutput {
  figures: Figure[];
  summary: string[];
}

export const resultsDir = join(repoRoot, "bench/results");

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** A figure; with a baseline, the ratio defaults to value / baseline. */
export function figure(
  name: string,
  value: number,
  unit: string,
  opts: { baseline?: [name: string, value: number]; ratio?: number; goal?: string } = {},
): Figure {
  const [baselineName, baselineValue] = opts.baseline ?? [null, null];
  const ratio = opts.ratio ?? (baselineValue ? value / baselineValue : null);
  return { name, value, unit, baselineName, baselineValue, ratio: ratio === null ? null : round(ratio, 2), goal: opts.goal ?? null };
}

export function machine(): Machine {
  const cores = cpus();
  return {
    cpu: cores[0]?.model.trim() ?? "unknown",
    cores: cores.length,
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    os: `${platform()} ${release()} ${arch()}`,
  };
}

const load = () => loadavg().map((x) => round(x, 2));

/** Runs one bench and writes bench/results/<bench>.json. */
export async function measure(bench: string, run: () => Promise<BenchOutput>, dir = resultsDir): Promise<BenchResult> {
  const date = new Date().toISOString();
  const start = load();
  const { figures, summary: _summary, ...details } = await run();
  const result: BenchResult = {
    bench,
    machine: machine(),
    date,
    load: { start, end: load() },
    figures,
    details,
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${bench}.json`), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/** `node --import tsx bench/<file>.ts` runs one bench on its own and records it (`pnpm bench <name>` is the usual way). */
export async function runWhenMain(moduleUrl: string, run: () => Promise<BenchOutput>): Promise<void> {
  const file = fileURLToPath(moduleUrl);
  if (file !== process.argv[1]) return;
  let summary: string[] = [];
  const result = await measure(basename(file, ".ts"), async () => {
    const output = await run();
    summary = output.summary;
    return output;
  });
  console.log(JSON.stringify(result, null, 2));
  for (const line of summary) console.log(line);
  process.exit(0);
}
