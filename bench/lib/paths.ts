import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The real catalog lives beside the repository, never in it. */
export function catalogPath(): string {
  const p = resolve(repoRoot, "../shared/data/registry-nodes.ndjson");
  if (!existsSync(p)) throw new Error(`the catalog is expected at ${p} (../shared/data beside the repository)`);
  return p;
}
