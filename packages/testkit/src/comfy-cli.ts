import { resolve } from "node:path";
import { pythonModulesMissing, runPython, type CliRun } from "./debian-python.ts";
import { repoRoot } from "./processes.ts";

export type { CliRun } from "./debian-python.ts";

/** comfy-cli's Python source and the typer it pins, vendored (test-support/vendor/README.md). */
const VENDOR = resolve(repoRoot, "test-support/vendor");
const NEEDED = ["httpx", "pathspec", "psutil", "rich", "click", "git", "tomlkit", "semver", "requests"];

/** Why the real comfy-cli cannot run here (a missing Debian package), or null when it can. */
export const comfyCliMissing = (): string | null => pythonModulesMissing("comfy-cli", NEEDED);

/** `comfy <args>` as shipped, in `cwd`, telemetry off; ENVIRONMENT as given (dev: http://localhost:8080). */
export function comfy(args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<CliRun> {
  return runPython(["-m", "comfy_cli", "--no-enable-telemetry", ...args], {
    cwd: opts.cwd,
    env: {
      HOME: opts.cwd,
      DO_NOT_TRACK: "1",
      PYTHONPATH: `${VENDOR}/comfy-cli:${VENDOR}/typer`,
      COLUMNS: "200",
      ...opts.env,
    },
  });
}
