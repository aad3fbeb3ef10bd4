import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildEntries, compiledFile, dockerContextFiles, readRepoFile, repoRoot, scriptCommand, scriptFile, services } from "./support.ts";

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
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

/** The instructions of the last stage (what the image is). */
function finalStage(ins: { op: string; args: string }[]): { op: string; args: string }[] {
  const lastFrom = ins.map((i) => i.op).lastIndexOf("FROM");
  return ins.slice(lastFrom);
}

describe.each(services)("services/$name/Dockerfile", ({ name, pkg, port }) => {
  const text = readRepoFile(`services/${name}/Dockerfile`);
  const ins = instructions(text);
  const last = finalStage(ins);
  const args = Object.fromEntries(
    ins.filter((i) => i.op === "ARG" && i.args.includes("=")).map((i) => i.args.split("=", 2) as [string, string]),
  );

  it("is multi-stage on node:20-slim (glibc, for sharp's prebuilt libvips)", () => {
    expect(ins.filter((i) => i.op === "FROM").length).toBeGreaterThanOrEqual(2);
    expect(args.NODE_IMAGE).toBe("node:20-slim");
    for (const from of ins.filter((i) => i.op === "FROM")) expect(from.args).toMatch(/^\$\{NODE_IMAGE\}/);
  });

  it("installs pnpm 12, compiles its own package, and deploys it hoisted with production dependencies only", () => {
    expect(text).toContain("npm install -g pnpm@12.21.0");
    const build = ins.findIndex((i) => i.op === "RUN" && i.args.includes(`pnpm --filter ${pkg} build`));
    const deploy = ins.findIndex((i) => i.op === "RUN" && /\bpnpm\b.*\bdeploy\b/.test(i.args));
    expect(build, "a build step").toBeGreaterThan(-1);
    expect(ins[build]!.args).toMatch(/pnpm install --offline --frozen-lockfile/);
    expect(deploy).toBeGreaterThan(build);
    expect(ins[deploy]!.args).toContain(`--filter ${pkg} `);
    expect(ins[deploy]!.args).toContain("--prod");
    // The bundle imports npm packages from dist/: they must sit flat in node_modules beside it.
    expect(ins[deploy]!.args).toContain("--config.node-linker=hoisted");
    expect(JSON.parse(readRepoFile(`services/${name}/package.json`)).name).toBe(pkg);
  });

  it("installs nothing outside the lockfile in the image (no global tsx or other tools)", () => {
    for (const i of ins) expect(i.args).not.toMatch(/\btsx\b/);
    for (const run of last.filter((i) => i.op === "RUN")) expect(run.args).not.toMatch(/\bnpm (install|i)\b|\bpnpm add\b/);
  });

  it("runs as a numeric non-root user in the final stage", () => {
    const user = last.filter((i) => i.op === "USER").at(-1)?.args;
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user!.split(":")[0])).toBeGreaterThan(0);
  });

  it("listens on its own port and checks its health there", () => {
    const env = last.filter((i) => i.op === "ENV").map((i) => i.args).join(" ");
    expect(env).toMatch(new RegExp(`\\bPORT=${port}\\b`));
    expect(last.find((i) => i.op === "EXPOSE")?.args).toBe(String(port));
    const hc = last.find((i) => i.op === "HEALTHCHECK")?.args ?? "";
    expect(hc).toContain("process.env.PORT");
    expect(hc).toContain("/healthz");
  });

  it("runs the compiled start file with the start script's node flags, in one node process (so SIGTERM reaches it)", () => {
    const cmd = JSON.parse(last.find((i) => i.op === "CMD")!.args) as string[];
    const start = scriptCommand(name, "start");
    expect(buildEntries(name)).toContain(start.file);
    expect(cmd).toEqual(["node", ...start.nodeFlags, compiledFile(start.file)]);
    expect(last.some((i) => i.op === "ENTRYPOINT")).toBe(false);
  });

  it("compiles every script the image is run with (start, and the CLIs compose and Kubernetes call)", () => {
    const pkgJson = JSON.parse(readRepoFile(`services/${name}/package.json`)) as { scripts: Record<string, string> };
    for (const script of Object.keys(pkgJson.scripts).filter((s) => !["typecheck", "build"].includes(s))) {
      expect(buildEntries(name), script).toContain(scriptFile(name, script));
    }
  });
});

describe("V8 flags", () => {
  it("are given on the node command line, never set at run time (v8.setFlagsFromString after start is undefined behaviour)", () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && e.name.endsWith(".ts"))
        .map((e) => join(e.parentPath, e.name));
    for (const root of ["services", "packages"]) {
      for (const file of sources(join(repoRoot, root)).filter((f) => /\/src\//.test(f) && !f.includes("node_modules"))) {
        expect(readFileSync(file, "utf8"), file).not.toMatch(/setFlagsFromString/);
      }
    }
  });

  it("the processes that take uploads start with the heap growth on the command line: images, service and root start scripts", () => {
    for (const name of ["gateway", "upload"] as const) expect(scriptCommand(name, "start").nodeFlags, name).toContain("--heap-growing-percent=200");
    const root = JSON.parse(readRepoFile("package.json")) as { scripts: { start: string } };
    // The root script builds the web page first (turbo, cached), then starts the gateway as its own start script does.
    expect(root.scripts.start.split(" && ").at(-1)).toBe(`node ${scriptCommand("gateway", "start").nodeFlags.join(" ")} --import tsx services/gateway/src/main.ts`);
  });

  it("the processes that serve search start without allocation-site pretenuring (see the search README, first-sight traffic)", () => {
    for (const name of ["gateway", "search"] as const) expect(scriptCommand(name, "start").nodeFlags, name).toContain("--no-allocation-site-pretenuring");
  });
});

describe(".dockerignore", () => {
  const context = dockerContextFiles();

  it("keeps host node_modules, git history, local data and secrets out of the build context", () => {
    for (const p of ["**/node_modules", ".git", "**/.data", ".env"]) expect(readRepoFile(".dockerignore").split("\n")).toContain(p);
    for (const f of context) expect(f).not.toMatch(/(^|\/)(node_modules|\.git|\.data)\/|^\.env/);
  });

  it("sends everything the build stage reads: the lockfile, the workspace file and every workspace package", () => {
    for (const f of ["pnpm-lock.yaml", "pnpm-workspace.yaml", "package.json"]) expect(context).toContain(f);
    for (const s of services) {
      expect(context).toContain(`services/${s.name}/package.json`);
      expect(context).toContain(`services/${s.name}/${scriptFile(s.name, "start")}`);
    }
    for (const pkg of ["contracts", "jobs", "platform", "build"]) expect(context).toContain(`packages/${pkg}/package.json`);
    expect(context).toContain("packages/build/bundle-service.mjs");
  });
});
