/**
 * How comfy-cli reaches a registry (Comfy-Org/comfy-cli e805d26 `comfy_cli/registry/api.py`, and
 * a6d6c00 `comfy_cli/command/custom_nodes/command.py`): the ENVIRONMENT variable picks one of three
 * fixed URLs, and `comfy node registry-install <id> [--version X]` asks that registry's
 * `/nodes/{id}/install` and downloads the `downloadUrl` it answers. `comfy node install` is not
 * it: that runs ComfyUI-Manager's cm-cli, which always asks api.comfy.org.
 */
const COMFY_CLI_ENVIRONMENTS: Record<string, string> = {
  "https://api.comfy.org": "",
  "https://stagingapi.comfy.org": "ENVIRONMENT=staging ",
  "http://localhost:8080": "ENVIRONMENT=dev ",
};
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface ComfyCliTarget {
  /** The environment prefix of the command (`ENVIRONMENT=dev `, or "" for the public registry). */
  prefix: string;
  /** False when comfy-cli cannot name this origin: it reaches it only through localhost:8080. */
  direct: boolean;
  /** For an origin comfy-cli cannot name: a port forward that makes localhost:8080 this instance. */
  forward?: string;
}

export function comfyCliTarget(origin: string): ComfyCliTarget {
  const known = COMFY_CLI_ENVIRONMENTS[origin];
  if (known !== undefined) return { prefix: known, direct: true };
  const url = new URL(origin);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname) && port === "8080") return { prefix: "ENVIRONMENT=dev ", direct: true };
  return { prefix: "ENVIRONMENT=dev ", direct: false, forward: `ssh -N -L 8080:${url.hostname}:${port} ${url.hostname}` };
}

/** The command that installs pack `id` (at `version`, or the one the registry's install route picks) from this instance. */
export function registryInstallCommand(origin: string, id: string, version?: string): string {
  const { prefix } = comfyCliTarget(origin);
  return `${prefix}comfy node registry-install ${id}${version ? ` --version ${version}` : ""}`;
}
