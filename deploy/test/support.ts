import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { ConfigSchema, loadConfig, type Config } from "@app/platform";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The four services, their workspace package and the port each listens on. */
export const services = [
  { name: "gateway", pkg: "@app/gateway", port: 8080 },
  { name: "search", pkg: "@app/search", port: 8081 },
  { name: "upload", pkg: "@app/upload", port: 8082 },
  { name: "worker", pkg: "@app/worker", port: 8083 },
] as const;

export type ServiceName = (typeof services)[number]["name"];

export function readRepoFile(rel: string): string {
  return readFileSync(join(repoRoot, rel), "utf8");
}

/** Every YAML document of a file, parse errors surfaced (a broken file must fail, not vanish). */
export function readYamlDocs(path: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(path, "utf8"));
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join("; ")}`);
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

export function readYaml(path: string): unknown {
  return parseYaml(readFileSync(path, "utf8"), { merge: true, maxAliasCount: 100 });
}

/**
 * A script of the service's package.json that runs a TypeScript file, as `tsx <file>.ts` or
 * `node [V8 flags] --import tsx <file>.ts`: the file and the node flags.
 */
export function scriptCommand(service: ServiceName, script: string): { file: string; nodeFlags: string[] } {
  const pkg = JSON.parse(readRepoFile(`services/${service}/package.json`)) as { scripts?: Record<string, string> };
  const cmd = pkg.scripts?.[script]?.trim();
  const tsx = cmd === undefined ? null : /^tsx\s+(\S+\.ts)$/.exec(cmd);
  if (tsx) return { file: tsx[1]!, nodeFlags: [] };
  const node = cmd === undefined ? null : /^node\s+((?:--\S+\s+)*)--import\s+tsx\s+(\S+\.ts)$/.exec(cmd);
  if (!node) throw new Error(`services/${service}/package.json: script "${script}" does not run a .ts file with tsx: ${cmd}`);
  return { file: node[2]!, nodeFlags: node[1]!.split(/\s+/).filter(Boolean) };
}

/** The TypeScript file a package script runs, e.g. "tsx src/main.ts" → "src/main.ts". */
export function scriptFile(service: ServiceName, script: string): string {
  return scriptCommand(service, script).file;
}

/** Where the service's build (`bundle-service`) puts a source entry point: src/cli/x.ts → dist/cli/x.js. */
export function compiledFile(source: string): string {
  const m = /^src\/(.+)\.ts$/.exec(source);
  if (!m) throw new Error(`not a source entry point: ${source}`);
  return `dist/${m[1]}.js`;
}

export interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions with continuation lines joined and comments dropped. */
export function dockerInstructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(" ") };
    });
}

export interface Stage {
  /** The `AS` name, or "" for an unnamed stage. */
  name: string;
  /** What the stage starts from: an image reference or an earlier stage's name. */
  from: string;
  instructions: Instruction[];
}

/** The root Dockerfile's stages in order, with the ARGs before the first FROM. */
export function dockerStages(): { globalArgs: Instruction[]; stages: Stage[] } {
  const ins = dockerInstructions(readRepoFile("Dockerfile"));
  const first = ins.findIndex((i) => i.op === "FROM");
  const stages: Stage[] = [];
  for (const i of ins.slice(first)) {
    if (i.op === "FROM") {
      const [from, as, name] = i.args.split(/\s+/);
      stages.push({ name: as?.toUpperCase() === "AS" ? name! : "", from: from!, instructions: [] });
    } else stages.at(-1)!.instructions.push(i);
  }
  return { globalArgs: ins.slice(0, first), stages };
}

/**
 * The stages one service's image is made of, base first: the Dockerfile's last stage with
 * `--build-arg SERVICE=<service>`, followed back through the stages it starts from.
 */
export function imageStages(service: ServiceName): Stage[] {
  const { stages } = dockerStages();
  const chain: Stage[] = [];
  let from = stages.at(-1)!.from.replaceAll("${SERVICE}", service);
  for (let stage = stages.find((s) => s.name === from); stage; stage = stages.find((s) => s.name === from)) {
    chain.unshift(stage);
    from = stage.from;
  }
  if (chain.length === 0) throw new Error(`Dockerfile: SERVICE=${service} names no stage`);
  return chain;
}

/** The exec-form CMD of the service's image (the last one of its stages). */
export function imageCommand(service: ServiceName): string[] {
  const cmd = imageStages(service)
    .flatMap((s) => s.instructions)
    .filter((i) => i.op === "CMD" && i.args.startsWith("["))
    .at(-1);
  if (!cmd) throw new Error(`Dockerfile: no exec-form CMD for SERVICE=${service}`);
  return JSON.parse(cmd.args) as string[];
}

/** The entry points the service's build script compiles. */
export function buildEntries(service: ServiceName): string[] {
  const pkg = JSON.parse(readRepoFile(`services/${service}/package.json`)) as { scripts?: Record<string, string> };
  const m = /^bundle-service((?:\s+\S+\.ts)+)$/.exec(pkg.scripts?.build?.trim() ?? "");
  if (!m) throw new Error(`services/${service}/package.json: no "build": "bundle-service <entries>" script`);
  return m[1]!.trim().split(/\s+/);
}

export const configKeys: ReadonlySet<string> = new Set(Object.keys(ConfigSchema.shape));

/** Runs the stack's own config validation, so a value the services would reject fails here. */
export function validateEnv(env: Record<string, string>): Config {
  return loadConfig(env);
}

export function commandOnPath(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function fileExists(rel: string): boolean {
  return existsSync(join(repoRoot, rel));
}

/** A .dockerignore pattern as a RegExp over slash-separated paths (the `*`, `**` and `?` we use). */
function dockerignoreRegExp(pattern: string): RegExp {
  let re = "";
  const p = pattern.replace(/^\/+|\/+$/g, "");
  for (let i = 0; i < p.length; i++) {
    const ch = p[i]!;
    if (ch === "*" && p[i + 1] === "*") {
      re += p[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += p[i + 2] === "/" ? 2 : 1;
    } else if (ch === "*") re += "[^/]*";
    else if (ch === "?") re += "[^/]";
    else re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/**
 * The files `docker build .` would send: the working tree's files that git does not ignore,
 * minus those .dockerignore excludes (a pattern matching a folder excludes what is under it).
 */
export function dockerContextFiles(): string[] {
  const files = spawnSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: repoRoot, encoding: "utf8" });
  if (files.status !== 0) throw new Error(`git ls-files failed: ${files.stderr}`);
  const patterns = readRepoFile(".dockerignore")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  if (patterns.some((p) => p.startsWith("!"))) throw new Error(".dockerignore: exceptions (!) are not modelled here");
  const res = patterns.map(dockerignoreRegExp);
  const excluded = (path: string) => {
    const parts = path.split("/");
    return parts.some((_, i) => res.some((re) => re.test(parts.slice(0, i + 1).join("/"))));
  };
  return files.stdout.split("\0").filter((f) => f !== "" && !excluded(f));
}
