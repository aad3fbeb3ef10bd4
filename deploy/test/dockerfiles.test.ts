import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  buildEntries,
  compiledFile,
  dockerContextFiles,
  dockerStages,
  fileExists,
  imageStages,
  readRepoFile,
  repoRoot,
  scriptCommand,
  scriptFile,
  services,
} from "./support.ts";

describe("Dockerfile (one for the four services)", () => {
  const { globalArgs, stages } = dockerStages();
  const all = stages.flatMap((s) => s.instructions);
  const text = readRepoFile("Dockerfile");
  const defaults = Object.fromEntries(
    globalArgs.filter((i) => i.op === "ARG" && i.args.includes("=")).map((i) => i.args.split("=", 2) as [string, string]),
  );

  it("is the only one: no service keeps a Dockerfile of its own", () => {
    for (const s of services) expect(fileExists(`services/${s.name}/Dockerfile`), s.name).toBe(false);
  });

  it("is multi-stage on node:20-slim (glibc, for sharp's prebuilt libvips)", () => {
    expect(defaults.NODE_IMAGE).toBe("node:20-slim");
    const names = new Set<string>();
    for (const stage of stages) {
      // Each stage starts from the Node image, an earlier stage, or the service's stage.
      expect(stage.from === "${NODE_IMAGE}" || names.has(stage.from) || stage.from === "service-${SERVICE}", stage.from).toBe(true);
      names.add(stage.name);
    }
    expect(stages.filter((s) => s.from === "${NODE_IMAGE}").length).toBeGreaterThanOrEqual(2);
  });

  it("makes the image of the service SERVICE names, with no default (one stage per service)", () => {
    expect(globalArgs).toContainEqual({ op: "ARG", args: "SERVICE" });
    expect(stages.at(-1)!.from).toBe("service-${SERVICE}");
    expect(
      stages
        .filter((s) => s.name.startsWith("service-"))
        .map((s) => s.name)
        .sort(),
    ).toEqual(services.map((s) => `service-${s.name}`).sort());
  });

  it("installs pnpm 12, compiles the service's package, and deploys it hoisted with production dependencies only", () => {
    expect(text).toContain("npm install -g pnpm@12.21.0");
    const install = all.findIndex((i) => i.op === "RUN" && /pnpm install --offline --frozen-lockfile/.test(i.args));
    const build = all.findIndex((i) => i.op === "RUN" && i.args.includes("pnpm --filter @app/${SERVICE} build"));
    const deploy = all.findIndex((i) => i.op === "RUN" && /\bpnpm\b.*\bdeploy\b/.test(i.args));
    expect(install, "an install from the lockfile").toBeGreaterThan(-1);
    expect(build, "a build step").toBeGreaterThan(install);
    expect(deploy).toBeGreaterThan(build);
    expect(all[deploy]!.args).toContain("--filter @app/${SERVICE} ");
    expect(all[deploy]!.args).toContain("--prod");
    // The bundle imports npm packages from dist/: they must sit flat in node_modules beside it.
    expect(all[deploy]!.args).toContain("--config.node-linker=hoisted");
    // The gateway serves the web page, which its image must carry built.
    expect(all[build]!.args).toMatch(/"\$\{SERVICE\}" = gateway \]; then pnpm --filter @app\/web build/);
  });

  it("installs nothing outside the lockfile (no global tsx or other tools)", () => {
    for (const i of all) expect(i.args).not.toMatch(/\btsx\b/);
    const image = new Set(services.flatMap((s) => imageStages(s.name)));
    for (const run of [...image].flatMap((s) => s.instructions).filter((i) => i.op === "RUN")) {
      expect(run.args).not.toMatch(/\bnpm (install|i)\b|\bpnpm add\b/);
    }
  });
});

describe.each(services)("Dockerfile with SERVICE=$name", ({ name, pkg, port }) => {
  const image = imageStages(name).flatMap((s) => s.instructions);

  it("is the workspace package the build filters on", () => {
    expect(pkg).toBe(`@app/${name}`);
    expect(JSON.parse(readRepoFile(`services/${name}/package.json`)).name).toBe(pkg);
  });

  it("runs as a numeric non-root user", () => {
    const user = image.filter((i) => i.op === "USER").at(-1)?.args;
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user!.split(":")[0])).toBeGreaterThan(0);
  });

  it("listens on its own port and checks its health there", () => {
    const env = image
      .filter((i) => i.op === "ENV")
      .map((i) => i.args)
      .join(" ");
    expect(env).toMatch(new RegExp(`\\bPORT=${port}\\b`));
    expect(image.filter((i) => i.op === "EXPOSE").map((i) => i.args)).toEqual([String(port)]);
    const hc = image.find((i) => i.op === "HEALTHCHECK")?.args ?? "";
    expect(hc).toContain("process.env.PORT");
    expect(hc).toContain("/healthz");
  });

  it("runs the compiled start file with the start script's node flags, in one node process (so SIGTERM reaches it)", () => {
    const cmd = JSON.parse(image.filter((i) => i.op === "CMD").at(-1)!.args) as string[];
    const start = scriptCommand(name, "start");
    expect(buildEntries(name)).toContain(start.file);
    expect(cmd).toEqual(["node", ...start.nodeFlags, compiledFile(start.file)]);
    expect(image.some((i) => i.op === "ENTRYPOINT")).toBe(false);
  });

  it("compiles every script the image is run with (start, and the CLIs compose and Kubernetes call)", () => {
    const pkgJson = JSON.parse(readRepoFile(`services/${name}/package.json`)) as { scripts: Record<string, string> };
    for (const script of Object.keys(pkgJson.scripts).filter((s) => !["typecheck", "build", "lint"].includes(s))) {
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
    for (const name of ["gateway", "upload"] as const)
      expect(scriptCommand(name, "start").nodeFlags, name).toContain("--heap-growing-percent=200");
    const root = JSON.parse(readRepoFile("package.json")) as { scripts: { start: string } };
    // The root script builds the web page first (turbo, cached), then starts the gateway as its own start script does.
    expect(root.scripts.start.split(" && ").at(-1)).toBe(
      `node ${scriptCommand("gateway", "start").nodeFlags.join(" ")} --import tsx services/gateway/src/main.ts`,
    );
  });

  it("the processes that serve search start without allocation-site pretenuring (see the search README, first-sight traffic)", () => {
    for (const name of ["gateway", "search"] as const)
      expect(scriptCommand(name, "start").nodeFlags, name).toContain("--no-allocation-site-pretenuring");
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
