import type { StoredNode } from "./catalog-record.ts";

/**
 * The pack `GET /comfy-nodes/{name}/node` answers when several provide the class, in the
 * registry's order (as the ComfyUI frontend's registry service documents it): a pack that
 * preempts the name, then the lower `search_ranking` (none counts as last), then more installs
 * (`downloads`), then the id, so the answer never depends on load order.
 */
export function bestProvider(name: string, packs: readonly StoredNode[]): StoredNode | undefined {
  let best: StoredNode | undefined;
  for (const p of packs) if (!best || compareProviders(name, p, best) < 0) best = p;
  return best;
}

export function compareProviders(name: string, a: StoredNode, b: StoredNode): number {
  const preempts = (r: StoredNode) => (r.preempted_app_node_names?.includes(name) ? 0 : 1);
  const ranking = (r: StoredNode) => r.search_ranking ?? Number.POSITIVE_INFINITY;
  return (
    preempts(a) - preempts(b) ||
    (ranking(a) === ranking(b) ? 0 : ranking(a) < ranking(b) ? -1 : 1) ||
    (b.downloads ?? 0) - (a.downloads ?? 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** The class names a pack provides for `/comfy-nodes/{name}/node`: its own and those it preempts, each once. */
export function classNamesOf(r: StoredNode): Set<string> {
  return new Set([...(r.app_node_names ?? []), ...(r.preempted_app_node_names ?? [])]);
}
