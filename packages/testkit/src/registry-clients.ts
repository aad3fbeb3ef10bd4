/**
 * What the registry's Python clients do with an answer, for tests that replay their requests:
 * the keys their code indexes (a missing one is their KeyError), the defaults they take for the
 * rest, and how comfy-cli picks its base URL. Read from ComfyUI-Manager glob/cnr_utils.py
 * (f39cbd5) and comfy-cli comfy_cli/registry/api.py (e805d26), whose `map_node_version` agree.
 */
type Json = Record<string, any>;

export interface MappedNodeVersion {
  changelog: string;
  dependencies: string[];
  deprecated: boolean;
  id: string;
  version: string;
  download_url: string;
}

/** `map_node_version`: `id` and `version` indexed, the rest defaulted. */
export function mapNodeVersion(v: Json): MappedNodeVersion {
  if (!("id" in v) || !("version" in v)) throw new Error(`KeyError: a version without id or version: ${JSON.stringify(v).slice(0, 200)}`);
  return { changelog: v.changelog ?? "", dependencies: v.dependencies ?? [], deprecated: v.deprecated ?? false, id: v.id, version: v.version, download_url: v.downloadUrl ?? "" };
}

/** comfy-cli's `map_node_to_node_class`: id, name and description indexed; latest_version mapped when present. */
export function mapNodeToNodeClass(n: Json): { id: string; name: string; description: string; latest_version: MappedNodeVersion | null } {
  for (const k of ["id", "name", "description"]) if (!(k in n)) throw new Error(`KeyError: ${k} in ${JSON.stringify(n).slice(0, 200)}`);
  return { id: n.id, name: n.name, description: n.description, latest_version: "latest_version" in n ? mapNodeVersion(n.latest_version) : null };
}

/** comfy-cli's `RegistryAPI.determine_base_url`: its only setting is ENVIRONMENT. */
export function comfyCliBaseUrl(env: Record<string, string | undefined>): string {
  if (env.ENVIRONMENT === "dev") return "http://localhost:8080";
  if (env.ENVIRONMENT === "staging") return "https://stagingapi.comfy.org";
  return "https://api.comfy.org";
}
