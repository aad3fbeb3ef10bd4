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
  return {
    changelog: v.changelog ?? "",
    dependencies: v.dependencies ?? [],
    deprecated: v.deprecated ?? false,
    id: v.id,
    version: v.version,
    download_url: v.downloadUrl ?? "",
  };
}

/** comfy-cli's `map_node_to_node_class`: id, name and description indexed; latest_version mapped when present. */
export function mapNodeToNodeClass(n: Json): { id: string; name: string; description: string; latest_version: MappedNodeVersion | null } {
  for (const k of ["id", "name", "description"]) if (!(k in n)) throw new Error(`KeyError: ${k} in ${JSON.stringify(n).slice(0, 200)}`);
  return {
    id: n.id,
    name: n.name,
    description: n.description,
    latest_version: "latest_version" in n ? mapNodeVersion(n.latest_version) : null,
  };
}

/** comfy-cli's `RegistryAPI.determine_base_url`: its only setting is ENVIRONMENT. */
export function comfyCliBaseUrl(env: Record<string, string | undefined>): string {
  if (env.ENVIRONMENT === "dev") return "http://localhost:8080";
  if (env.ENVIRONMENT === "staging") return "https://stagingapi.comfy.org";
  return "https://api.comfy.org";
}

/**
 * ComfyUI-Manager's channel (Comfy-Org/ComfyUI-Manager f39cbd5): what it fetches and what its code
 * indexes in each file, for a test that replays it against a channel served here.
 *
 * Start-up (`default_cache_update` in glob/manager_server.py) fetches these five from its
 * channel URL at once (`default_cache_as_channel_url = True`; otherwise from GitHub), then reads
 * the registry's list and `custom-node-list.json` again; its list view reads `github-stats.json`
 * and `extras.json` from the `default` channel; "Install Missing Custom Nodes" reads
 * `extension-node-map.json`.
 */
export const MANAGER_STARTUP_FILES = [
  "custom-node-list.json",
  "extension-node-map.json",
  "model-list.json",
  "alter-list.json",
  "github-stats.json",
] as const;
export const MANAGER_LIST_FILES = ["github-stats.json", "extras.json"] as const;

/** `load_nightly`: every entry's `files` (a repository URL keys it by its last segment) and `id`. */
export function managerLoadNightly(list: Json): Map<string, Json> {
  const packs = new Map<string, Json>();
  for (const x of list["custom_nodes"]) {
    for (const y of x["files"])
      if (y.includes("github.com") && !(y.endsWith(".py") || y.endsWith(".js"))) packs.set(y.split("/").at(-1), x);
    if ("id" in x && !packs.has(x["id"])) packs.set(x["id"], x);
  }
  return packs;
}

/** `populate_github_stats` and `populate_favorites`: stars, last update and trust by `reference`; favourites by key. */
export function managerPopulateStats(
  packs: Map<string, Json>,
  stats: Json,
  extras: Json,
): Map<string, { stars: number; last_update: string | number; trust: boolean; is_favorite: boolean }> {
  const favorites = new Set<string>(extras["favorites"]);
  const out = new Map<string, { stars: number; last_update: string | number; trust: boolean; is_favorite: boolean }>();
  for (const [k, v] of packs) {
    const s = stats[v["reference"]];
    out.set(
      k,
      s
        ? { stars: s["stars"], last_update: s["last_update"], trust: s["author_account_age_days"] > 600, is_favorite: favorites.has(k) }
        : { stars: -1, last_update: -1, trust: false, is_favorite: favorites.has(k) },
    );
  }
  return out;
}

/** The missing-node mapping: each class of a workflow → the repository URLs whose `[classes, meta]` entry lists it. */
export function managerMissingNodePacks(map: Json, classes: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>(classes.map((c) => [c, []]));
  for (const [url, entry] of Object.entries(map)) {
    const [names, meta] = entry as [string[], Json];
    if (typeof meta["title_aux"] !== "string") throw new Error(`KeyError: title_aux in ${url}`);
    for (const n of names) found.get(n)?.push(url);
  }
  return found;
}
