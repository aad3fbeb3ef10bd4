import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { testEnv } from "./env.ts";

/** Debian's Python, where the Debian packages the vendored clients need are installed (not a pyenv or venv one). */
const PYTHON = "/usr/bin/python3";

export interface CliRun {
  code: number | null;
  output: string;
}

/** Why `client` cannot run here (no python3, or a missing Debian package among `modules`), or null when it can. */
export function pythonModulesMissing(client: string, modules: readonly string[]): string | null {
  if (!existsSync(PYTHON)) return `${PYTHON} is absent`;
  try {
    execFileSync(PYTHON, ["-c", `import ${modules.join(", ")}`], { stdio: "pipe" });
    return null;
  } catch (err) {
    const last = String((err as { stderr?: Buffer }).stderr ?? err)
      .trim()
      .split("\n")
      .pop();
    return `${client}'s Debian dependencies are missing (${last}); .ci/run installs them`;
  }
}

/**
 * Debian's python3 with `args`, in `cwd`, with only PATH from the caller's environment (no proxy:
 * every request goes to the local services), stdout and stderr collected as one text.
 */
export function runPython(args: string[], opts: { cwd: string; env: Record<string, string> }): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(PYTHON, args, {
      cwd: opts.cwd,
      env: { PATH: testEnv.PATH, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => done({ code, output }));
  });
}
