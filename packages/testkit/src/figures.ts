import { appendFileSync } from "node:fs";
import { testEnv } from "./env.ts";

/** Where measured figures go (one JSON line each), for test-reliability/README.md. */
export const FIGURES_FILE = testEnv.RELIABILITY_FIGURES;

export function record(name: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ name, at: new Date().toISOString(), ...figures });
  console.log(`[figure] ${line}`);
  appendFileSync(FIGURES_FILE, `${line}\n`);
}
