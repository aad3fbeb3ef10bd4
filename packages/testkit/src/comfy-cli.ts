import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { repoRoot } from "./processes.ts";

/** comfy-cli's Python source and the typer it pins, vendored (test-support/vendor/README.md). */
const VENDOR = resolve(repoRoot, "test-support/vendor");
/** Debian's Python, where the Debian packages comfy-cli needs are installed (not a pyenv or venv one). */
const PYTHON = "/usr/bin/python3";
const NEEDED = ["httpx", "pathspec", "psutil", "rich", "click", "git", "tomlkit", "semver", "requests"];

/** Why the real comfy-cli cannot run here (a missing Debian package), or null when it can. */
export function comfyCliMissing(): string | null {
  if (!existsSync(PYTHON)) return `${PYTHON} is absent`;
  try {
    execFileSync(PYTHON, ["-c", `import ${NEEDED.join(", ")}`], { stdio: "pipe" });
    return null;
  } catch (err) {
    return `comfy-cli's Debian dependencies are missing (${String((err as { stderr?: Buffer }).stderr ?? err)
      .trim()
      .split("\n")
      .pop()}); .ci/run installs them`;
  }
}

export interface CliRun {
  code: number | null;
  output: string;
}

/** `comfy <args>` as shipped, in `cwd`, telemetry off; ENVIRONMENT as given (dev: http://localhost:8080). */
export function comfy(args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(PYTHON, ["-m", "comfy_cli", "--no-enable-telemetry", ...args], {
      cwd: opts.cwd,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: opts.cwd,
        DO_NOT_TRACK: "1",
        PYTHONPATH: `${VENDOR}/comfy-cli:${VENDOR}/typer`,
        COLUMNS: "200",
        ...opts.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => done({ code, output }));
  });
}
