import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The environment is read in two places: services through `loadConfig`, which parses it once
 * against the config schema where every default lives, and the tests, benches and their child
 * processes through the test kit (its `env.ts` holds their knobs and defaults; the rest of the
 * kit starts processes with their own environment). Every other file takes what those parsed.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ALLOWED = new Set(["packages/platform/src/config.ts"]);
const ALLOWED_DIRS = ["packages/testkit/src/"];
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git", ".turbo"]);
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIPPED_DIRS.has(e.name)) return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : SOURCE.test(e.name) ? [path] : [];
  });
}

/** `process` itself, bare or as `globalThis.process`. */
function isProcess(node: ts.Expression): boolean {
  return (ts.isIdentifier(node) && node.text === "process") || (ts.isPropertyAccessExpression(node) && node.name.text === "process");
}

function bindsEnv(pattern: ts.ObjectBindingPattern): boolean {
  return pattern.elements.some((e) => (e.propertyName ?? e.name).getText() === "env");
}

/**
 * The 1-based lines of `text` that read the environment: `process.env`, `process["env"]`,
 * `{ env } = process` and `import { env } from "node:process"`. It walks the syntax tree, so
 * the words inside a string or a comment are not a read.
 */
function envReadLines(fileName: string, text: string): number[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    const reads =
      (ts.isPropertyAccessExpression(node) && node.name.text === "env" && isProcess(node.expression)) ||
      (ts.isElementAccessExpression(node) &&
        ts.isStringLiteralLike(node.argumentExpression) &&
        node.argumentExpression.text === "env" &&
        isProcess(node.expression)) ||
      (ts.isVariableDeclaration(node) &&
        ts.isObjectBindingPattern(node.name) &&
        node.initializer !== undefined &&
        isProcess(node.initializer) &&
        bindsEnv(node.name)) ||
      (ts.isImportDeclaration(node) &&
        ts.isStringLiteral(node.moduleSpecifier) &&
        /^(node:)?process$/.test(node.moduleSpecifier.text) &&
        node.importClause?.namedBindings !== undefined &&
        ts.isNamedImports(node.importClause.namedBindings) &&
        node.importClause.namedBindings.elements.some((e) => (e.propertyName ?? e.name).text === "env"));
    if (reads) lines.push(file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return lines;
}

/** `file:line` of every environment read in the repository's source, outside the allowed files. */
function envReads(root: string): string[] {
  return sourceFiles(root)
    .map((f) => relative(root, f).split("\\").join("/"))
    .filter((f) => !ALLOWED.has(f) && !ALLOWED_DIRS.some((d) => f.startsWith(d)))
    .flatMap((f) => {
      const text = readFileSync(join(root, f), "utf8");
      const lines = text.split("\n");
      return envReadLines(f, text).map((n) => `${f}:${n}: ${lines[n - 1]!.trim()}`);
    });
}

describe("the environment", () => {
  it("is read only by the config schema's loadConfig and the test kit", () => {
    expect(envReads(ROOT)).toEqual([]);
  });

  it("the check finds each way of reading it, and not its name in a string or a comment", () => {
    for (const code of [
      "const p = process.env.PORT;",
      'const p = process["env"].PORT;',
      "const { env } = process;",
      "const { env: e } = process;",
      "f(process . env)",
      "f(globalThis.process.env)",
      "const child = { ...process.env, X: '1' };",
      "const s = `port ${process.env.PORT}`;",
      'import { env } from "node:process";',
    ])
      expect(envReadLines("x.ts", code), code).toEqual([1]);
    for (const code of [
      "const env = loadConfig();",
      "config.envelope",
      "processEnvelope()",
      'expect(hc).toContain("process.env.PORT");',
      "const s = `process.env.PORT`;",
      "// reads process.env.PORT",
      "const { argv } = process;",
    ])
      expect(envReadLines("x.ts", code), code).toEqual([]);
  });

  it("the check scans every folder, and leaves out only the allowed files and dependencies", () => {
    const root = mkdtempSync(join(tmpdir(), "env-reads-"));
    try {
      const plant = (path: string, code: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), code);
      };
      const read = "export const port = process.env.PORT;\n";
      for (const path of [
        "bench/servers/planted.ts",
        "services/search/test/planted.test.ts",
        "test-reliability/planted.test.ts",
        "packages/jobs/test/fixtures/planted.ts",
        "deploy/test/planted.test.ts",
        "packages/testkit/test/planted.ts",
      ])
        plant(path, read);
      plant("packages/platform/src/config.ts", read);
      plant("packages/testkit/src/env.ts", read);
      plant("node_modules/dep/index.js", read);
      plant("services/upload/dist/main.js", read);
      plant("deploy/test/text.test.ts", 'expect(hc).toContain("process.env.PORT");\n');
      expect(envReads(root).sort()).toEqual(
        [
          "bench/servers/planted.ts",
          "deploy/test/planted.test.ts",
          "packages/jobs/test/fixtures/planted.ts",
          "packages/testkit/test/planted.ts",
          "services/search/test/planted.test.ts",
          "test-reliability/planted.test.ts",
        ].map((f) => `${f}:1: ${read.trim()}`),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
