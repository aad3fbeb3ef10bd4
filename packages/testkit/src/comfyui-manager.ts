import { resolve } from "node:path";
import { pythonModulesMissing, runPython, type CliRun } from "./debian-python.ts";
import { repoRoot } from "./processes.ts";

/** Runs ComfyUI-Manager's vendored registry install (test-support/vendor/README.md). */
const HARNESS = resolve(repoRoot, "packages/testkit/src/comfyui-manager-install.py");
const NEEDED = ["git", "tqdm", "yaml", "toml", "rich", "packaging", "aiohttp", "requests"];

/** Why ComfyUI-Manager's code cannot run here (no python3, a missing Debian package), or null when it can. */
export const comfyuiManagerMissing = (): string | null => pythonModulesMissing("ComfyUI-Manager", NEEDED);

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
  return runPython(args, { cwd: opts.userDir, env: { HOME: opts.userDir, PYTHONDONTWRITEBYTECODE: "1" } });
}
