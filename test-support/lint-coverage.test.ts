import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";

/**
 * `pnpm lint` is `turbo run lint`: turbo runs a package's `lint` script, and silently skips a
 * package that has none. So every workspace package must have one, or its files go unlinted.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The workspace's package folders, from pnpm-workspace.yaml's `dir` and `dir/*` entries. */
function workspacePackages(): string[] {
  const { packages } = parseYaml(readFileSync(join(ROOT, "pnpm-workspace.yaml"), "utf8")) as { packages: string[] };
  return packages.flatMap((entry) => {
    if (!entry.endsWith("/*")) return [entry];
    const parent = entry.slice(0, -2);
    return readdirSync(join(ROOT, parent), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(ROOT, parent, d.name, "package.json")))
      .map((d) => `${parent}/${d.name}`);
  });
}

describe("the linter's reach", () => {
  const folders = workspacePackages();

  it("finds the workspace's packages", () => {
    expect(folders).toEqual(expect.arrayContaining(["packages/contracts", "services/gateway", "services/web", "bench", "deploy"]));
  });

  it.each(folders)("%s runs `eslint .` as its lint script", (folder) => {
    const pkg = JSON.parse(readFileSync(join(ROOT, folder, "package.json"), "utf8")) as { scripts?: Record<string, string> };
    expect(pkg.scripts?.lint).toBe("eslint .");
  });
});
