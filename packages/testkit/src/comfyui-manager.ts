import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { repoRoot } from "./processes.ts";
import type { CliRun } from "./comfy-cli.ts";

/** Runs ComfyUI-Manager's vendored registry install (test-support/vendor/README.md). */
const HARNESS = resolve(repoRoot, "packages/testkit/src/comfyui-manager-install.py");
/** Debian's Python, where the Debian packages Manager needs are installed (not a pyenv or venv one). */
const PYTHON = "/usr/bin/python3";
const NEEDED = ["git", "tqdm", "yaml", "toml", "rich", "packaging", "aiohttp", "requests"];

/** Why ComfyUI-Manager's code cannot run here (no python3, a missing Debian package), or null when it can. */
export function comfyuiManagerMissing(): string | null {
  if (!existsSync(PYTHON)) return `${PYTHON} is absent`;
  try {
    execFileSync(PYTHON, ["-c", `import ${NEEDED.join(", ")}`], { stdio: "pipe" });
    return null;
  } catch (err) {
    return `ComfyUI-Manager's Debian dependencies are missing (${String((err as { stderr?: Buffer }).stderr ?? err)
      .trim()
      .split("\n")
      .pop()}); .ci/run installs them`;
  }
}

/**
 * ComfyUI-Manager's `cnr_install` of registry pack `nodeId` from the registry at `registryUrl` into
 * `customNodes`, Manager's config and cache kept in `userDir`.
 */
export function comfyuiManagerInstall(opts: {
  registryUrl: string;
  customNodes: string;
  userDir: string;
  nodeId: string;
  version?: string;
}): Promise<CliRun> {
  const args = [HARNESS, opts.registryUrl, opts.customNodes, opts.userDir, opts.nodeId];
  if (opts.version) args.push(opts.version);
  return new Promise((done, fail) => {
    const child = spawn(PYTHON, args, {
      cwd: opts.userDir,
      // No proxy from the caller's environment: every request goes to the local registry.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: opts.userDir, PYTHONDONTWRITEBYTECODE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => done({ code, output }));
  });
}
