import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where measured figures go (one JSON line each), for test-reliability/README.md. */
export const FIGURES_FILE = process.env.RELIABILITY_FIGURES ?? join(tmpdir(), "reliability-figures.ndjson");

export function record(name: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ name, at: new Date().toISOString(), ...figures });
  console.log(`[figure] ${line}`);
  appendFileSync(FIGURES_FILE, `${line}\n`);
}
