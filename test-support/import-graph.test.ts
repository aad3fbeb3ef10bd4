import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCircular, parseDependencyTree, type DependencyTree } from "dpdm";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The structure drawn from the imports of every package and service (`src/` only, types
 * included, workspace packages followed into their sources): no import circle anywhere, and no
 * arrow against the layers below.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Folders that must not import from another: `[from, to, why]`. */
const FORBIDDEN_ARROWS: ReadonlyArray<readonly [string, string, string]> = [
  ["domain", "adapters", "the domain is what adapters serve"],
  ["adapters", "routes", "an adapter serves any face; the routes are one face over it"],
  ["catalog", "jobs", "the catalog is handed its queue; the jobs run the catalog"],
];
/** A folder inside a package's `src/` (the `@app/jobs` package is not a `jobs/` folder). */
const inFolder = (file: string, folder: string) => new RegExp(`(^|/)src/([^/]+/)*${folder}/`).test(file);

interface Graph {
  files: string[];
  circles: string[][];
  /** Arrows between folders named in FORBIDDEN_ARROWS. */
  forbidden: string[];
  unresolved: string[];
}

async function importGraph(root: string, patterns: string[]): Promise<Graph> {
  const tree: DependencyTree = await parseDependencyTree(patterns, {
    context: root,
    cwd: root,
    // Type-only imports count: a circle of types still ties the files' meanings together.
    transform: false,
    skipDynamicImports: false,
    extensions: [".ts", ".tsx", ".mjs", ".js", ".json"],
    include: /\.(ts|tsx|mts|mjs|js)$/,
    exclude: /node_modules/,
  });
  const rel = (f: string) => relative(root, resolve(root, f)).split("\\").join("/");
  const edges = Object.entries(tree).flatMap(([from, deps]) =>
    (deps ?? []).map((d) => ({ from: rel(from), request: d.request, to: d.id === null ? null : rel(d.id) })),
  );
  return {
    files: Object.keys(tree).map(rel),
    circles: parseCircular(tree).map((c) => c.map(rel)),
    forbidden: edges
      .filter((e) => e.to && FORBIDDEN_ARROWS.some(([from, to]) => inFolder(e.from, from) && inFolder(e.to!, to)))
      .map((e) => `${e.from} -> ${e.to}`),
    // An import that does not resolve would hide its arrows: relative ones must all resolve.
    unresolved: edges.filter((e) => e.to === null && e.request.startsWith(".")).map((e) => `${e.from} -> ${e.request}`),
  };
}

describe("the import graph", () => {
  it(`of every package and service has no circle and no arrow ${FORBIDDEN_ARROWS.map(([from, to]) => `${from}/ -> ${to}/`).join(", ")}`, async () => {
    const g = await importGraph(ROOT, ["packages/*/src/**/*.{ts,tsx}", "services/*/src/**/*.{ts,tsx}"]);
    // Every service and package was read, through the workspace's own package links.
    for (const dir of [
      "packages/blobs",
      "packages/contracts",
      "packages/jobs",
      "packages/platform",
      "services/gateway",
      "services/search",
      "services/upload",
      "services/worker",
      "services/web",
    ]) {
      expect(
        g.files.some((f) => f.startsWith(`${dir}/src/`)),
        dir,
      ).toBe(true);
    }
    expect(g.unresolved).toEqual([]);
    expect(g.circles).toEqual([]);
    expect(g.forbidden).toEqual([]);
  });

  describe("finds what it looks for", () => {
    const dir = mkdtempSync(join(tmpdir(), "import-graph-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };

    it("a circle of type imports and each forbidden arrow (domain/ to adapters/, adapters/ to routes/, catalog/ to jobs/)", async () => {
      write("src/a.ts", 'import type { B } from "./b.ts";\nexport type A = { b?: B };\n');
      write("src/b.ts", 'import type { A } from "./a.ts";\nexport type B = { a?: A };\n');
      write("src/domain/rule.ts", 'import { store } from "../adapters/store.ts";\nexport const rule = store;\n');
      write("src/adapters/store.ts", "export const store = 1;\n");
      write(
        "src/adapters/archives/service.ts",
        'import type { Route } from "../../routes/route.ts";\nexport type Service = { route?: Route };\n',
      );
      write("src/routes/route.ts", "export type Route = string;\n");
      write("src/catalog/catalog.ts", 'import { jobs } from "../jobs/jobs.ts";\nexport const catalog = jobs;\n');
      write("src/jobs/jobs.ts", "export const jobs = 1;\n");
      // The allowed directions are not reported.
      write("src/routes/uses-adapters.ts", 'import { store } from "../adapters/store.ts";\nexport const r = store;\n');
      write("src/jobs/uses-catalog.ts", 'import { catalog } from "../catalog/catalog.ts";\nexport const j = catalog;\n');
      const g = await importGraph(dir, ["src/**/*.ts"]);
      expect(g.circles.map((c) => [...c].sort())).toEqual([["src/a.ts", "src/b.ts"]]);
      expect([...g.forbidden].sort()).toEqual([
        "src/adapters/archives/service.ts -> src/routes/route.ts",
        "src/catalog/catalog.ts -> src/jobs/jobs.ts",
        "src/domain/rule.ts -> src/adapters/store.ts",
      ]);
      expect(g.unresolved).toEqual([]);
    });
  });
});
