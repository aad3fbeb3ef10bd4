/**
 * The fake registry's bulk routes and its node class definitions, as production answers them
 * (the production OpenAPI in ../shared/spec; registry-backend `ListAllNodeVersions` /
 * `ListNodeVersions` at 8b82dfe):
 *
 * - `GET /versions`: every version of every pack, `ORDER BY version DESC` (the version text; ties
 *   in table order here, stable), `statuses` (repeatable), `page`, `pageSize` (default 10, over
 *   100 → 400), `status_reason` left out unless `include_status_reason=true`;
 * - `GET /comfy-nodes` (ListAllComfyNodes): `page`, `pageSize` (default 100), `node_id`,
 *   `node_version`, `comfy_node_name`, answering `{comfy_nodes, total}`;
 * - a ComfyNode carries its whole definition (`input_types`, `return_types`, `return_names`,
 *   `output_is_list`, `category`, `description`, `function`, `deprecated`, `experimental`,
 *   `policy`), made here from its name, the same on every call.
 */
export interface ListedVersion extends Record<string, unknown> {
  version: string;
  status: string;
}

export function allVersionsPage(versions: readonly ListedVersion[], q: URLSearchParams): [number, unknown] {
  const size = q.has("pageSize") ? Number(q.get("pageSize")) : 10;
  if (!Number.isInteger(size) || size < 1) return [400, { message: "Invalid pageSize" }];
  if (size > 100) return [400, { message: `Invalid pageSize: ${size}. The maximum allowed is 100.` }];
  const page = Math.max(1, Number(q.get("page") ?? 1) || 1);
  const statuses = q.getAll("statuses");
  const withReason = q.get("include_status_reason") === "true";
  const matched = versions
    .filter((v) => statuses.length === 0 || statuses.includes(v.status))
    .map((v, i) => [v, i] as const)
    .sort(([a, i], [b, j]) => (a.version < b.version ? 1 : a.version > b.version ? -1 : i - j))
    .map(([v]) => v);
  const shown = matched.slice((page - 1) * size, page * size).map((v) => {
    if (withReason) return v;
    const { status_reason: _drop, ...rest } = v;
    return rest;
  });
  return [200, { total: matched.length, versions: shown, page, pageSize: size, totalPages: Math.ceil(matched.length / size) }];
}

/** A class of a version, for the list of every class. */
export interface ListedClass {
  nodeId: string;
  version: string;
  name: string;
}

export function allComfyNodesPage(classes: readonly ListedClass[], q: URLSearchParams): [number, unknown] {
  const size = q.has("pageSize") ? Number(q.get("pageSize")) : 100;
  if (!Number.isInteger(size) || size < 1) return [400, { message: "Invalid pageSize" }];
  const page = Math.max(1, Number(q.get("page") ?? 1) || 1);
  const [id, version, name] = [q.get("node_id"), q.get("node_version"), q.get("comfy_node_name")];
  const matched = classes.filter(
    (c) => (id === null || c.nodeId === id) && (version === null || c.version === version) && (name === null || c.name === name),
  );
  return [
    200,
    { comfy_nodes: matched.slice((page - 1) * size, page * size).map((c) => comfyNodeDefinition(c.name)), total: matched.length },
  ];
}

/** A whole ComfyNode made from its name: sockets, category and entry point, as the registry's extraction records them. */
export function comfyNodeDefinition(name: string): Record<string, unknown> {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  const outputs = ["IMAGE", "MASK", "LATENT", "CONDITIONING"].slice(0, 1 + (h % 3));
  return {
    comfy_node_name: name,
    category: `fake/${name.slice(0, 1).toLowerCase()}`,
    description: `${name}: a node of the fake registry.`,
    input_types: JSON.stringify({
      required: { image: ["IMAGE"], strength: ["FLOAT", { default: 1, min: 0, max: 10 }] },
      optional: { mask: ["MASK"] },
    }),
    return_types: JSON.stringify(outputs),
    return_names: JSON.stringify(outputs.map((o) => o.toLowerCase())),
    output_is_list: outputs.map((_, i) => i === 2),
    function: `run_${name.replace(/[^A-Za-z0-9]/g, "_").toLowerCase()}`,
    deprecated: h % 17 === 0,
    experimental: h % 5 === 0,
    policy: "ComfyNodePolicyActive",
  };
}
