import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { repoRoot } from "./processes.ts";
import { testEnv } from "./env.ts";
import { FIXTURE_NODES, FIXTURE_SEED, generateCatalog } from "@app/demo-catalog";
import { RELEVANCE_SET, type RegistryNode } from "./relevance-set.ts";

export { RELEVANCE_SET, type RegistryNode } from "./relevance-set.ts";
// The generator is a runtime package (CATALOG_SOURCE=demo serves it); the tests reach it here as before.
export { FIXTURE_NODES, FIXTURE_SEED, generateCatalog, seeded } from "@app/demo-catalog";

/**
 * The one way a test or a benchmark gets a catalog. The real one (5,892 packs) sits beside the
 * repository in CI and on the authors' machines, never in it; elsewhere the repository's own
 * fixture is used: the hand-written relevance set plus a seeded, registry-shaped generated
 * catalog, written once to the temporary directory.
 */
export interface TestCatalog {
  path: string;
  kind: "real" | "generated";
  /** Records in the file (lines), every one valid: what a full read reports as `read`. */
  records: number;
  /** One line for a test's or a benchmark's output: which catalog, and why. */
  description: string;
}

/** Beside the repository; a worktree elsewhere names it with REAL_CATALOG_PATH. */
export const REAL_CATALOG_PATH = testEnv.REAL_CATALOG_PATH ?? resolve(repoRoot, "../shared/data/registry-nodes.ndjson");

let cached: TestCatalog | undefined;

export function testCatalog(): TestCatalog {
  if (cached) return cached;
  if (existsSync(REAL_CATALOG_PATH)) {
    const records = readFileSync(REAL_CATALOG_PATH, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "").length;
    cached = { path: REAL_CATALOG_PATH, kind: "real", records, description: `the real catalog (${records} nodes) at ${REAL_CATALOG_PATH}` };
  } else {
    const nodes = fixtureCatalog();
    const text = toNdjson(nodes);
    // Named by content: a changed generator or relevance set never reuses an old file.
    const path = join(tmpdir(), `crs-catalog-fixture-${createHash("sha256").update(text).digest("hex").slice(0, 16)}.ndjson`);
    if (!existsSync(path)) writeAtomically(path, text);
    cached = {
      path,
      kind: "generated",
      records: nodes.length,
      description: `the repository's generated catalog (${nodes.length} nodes, seed ${FIXTURE_SEED}) at ${path}: ${REAL_CATALOG_PATH} is absent`,
    };
  }
  return cached;
}

/** The fixture: the relevance set first, then the generated nodes. */
export function fixtureCatalog(): RegistryNode[] {
  return [...RELEVANCE_SET, ...generateCatalog({ seed: FIXTURE_SEED, nodes: FIXTURE_NODES })];
}

/** NDJSON, written to a temporary name and renamed: parallel test workers never read half a file. */
export function writeCatalogFile(path: string, nodes: readonly RegistryNode[]): void {
  writeAtomically(path, toNdjson(nodes));
}

const toNdjson = (nodes: readonly RegistryNode[]): string => nodes.map((n) => JSON.stringify(n)).join("\n") + "\n";

function writeAtomically(path: string, text: string): void {
  mkdirSync(resolve(path, ".."), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
