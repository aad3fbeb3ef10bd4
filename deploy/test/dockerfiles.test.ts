import { describe, expect, it } from "vitest";
import { dockerContextFiles, lockedTsxVersion, readRepoFile, scriptFile, services } from "./support.ts";

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

  it("installs pnpm 12 and deploys its own package with production dependencies only", () => {
    expect(text).toContain("npm install -g pnpm@12.21.0");
    const deploy = ins.find((i) => i.op === "RUN" && /\bpnpm\b.*\bdeploy\b/.test(i.args));
    expect(deploy?.args).toContain(`--filter ${pkg} `);
    expect(deploy?.args).toContain("--prod");
    expect(JSON.parse(readRepoFile(`services/${name}/package.json`)).name).toBe(pkg);
  });

  it("runs tsx at the version the lockfile pins", () => {
    expect(args.TSX_VERSION).toBe(lockedTsxVersion());
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

  it("starts the file of the package's start script, in one node process (so SIGTERM reaches it)", () => {
    const cmd = JSON.parse(last.find((i) => i.op === "CMD")!.args) as string[];
    expect(cmd).toEqual(["node", "--import", "tsx", scriptFile(name, "start")]);
    expect(last.some((i) => i.op === "ENTRYPOINT")).toBe(false);
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
    for (const pkg of ["contracts", "jobs", "platform"]) expect(context).toContain(`packages/${pkg}/package.json`);
  });
});
