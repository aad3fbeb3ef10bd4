import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The environment is read in one place: `loadConfig` parses it once against the schema, where
 * every default lives, and everything else takes the parsed config. Only the test kit (which
 * starts processes with their own environment) reads it besides.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ALLOWED = new Set(["packages/platform/src/config.ts"]);
const ALLOWED_DIRS = ["packages/testkit/"];
const ENV_READ = /\bprocess\s*(\.\s*env\b|\[\s*["'`]env["'`]\s*\])|\{\s*env\s*\}\s*=\s*process\b/;
const SOURCE = /\.(ts|tsx|mts|js|mjs)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules" || e.name === "dist") return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : SOURCE.test(e.name) ? [path] : [];
  });
}

/** `file:line` of every environment read under `src/` of each package and service, outside the allowed files. */
function envReads(root: string): string[] {
  const srcDirs = ["packages", "services"].flatMap((top) =>
    readdirSync(join(root, top), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(root, top, e.name, "src")),
  );
  return srcDirs
    .flatMap((dir) => {
      try {
        return sourceFiles(dir);
      } catch {
        return []; // a package without src/
      }
    })
    .map((f) => relative(root, f).split("\\").join("/"))
    .filter((f) => !ALLOWED.has(f) && !ALLOWED_DIRS.some((d) => f.startsWith(d)))
    .flatMap((f) =>
      readFileSync(join(root, f), "utf8")
        .split("\n")
        .flatMap((line, i) => (ENV_READ.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
}

describe("the environment", () => {
  it("is read only by the config schema's loadConfig (and the test kit)", () => {
    expect(envReads(ROOT)).toEqual([]);
  });

  it("the check finds each way of reading it", () => {
    for (const line of ["const p = process.env.PORT;", 'const p = process["env"].PORT;', "const { env } = process;", "f(process . env)"])
      expect(ENV_READ.test(line), line).toBe(true);
    for (const line of ["const env = loadConfig();", "config.envelope", "processEnvelope()"]) expect(ENV_READ.test(line), line).toBe(false);
  });
});
