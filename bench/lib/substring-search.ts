/** The fields the comparison engines read. */
export interface StoredNodeLike {
  id: string;
  name?: string;
  description?: string;
  author?: string;
  repository?: string;
  status?: string;
  app_node_names?: string[];
}

/**
 * The public registry's search (Comfy-Org/registry-backend bf224c5,
 * services/registry/registry_svc.go ListNodes): the whole search string, case folded, contained
 * in id, name, description or author (`ContainsFold`, SQL ILIKE '%term%'), banned packs left
 * out, no ordering: rows come back in table order, here the catalog's order.
 */
export function substringSearch(packs: readonly StoredNodeLike[]): (query: string, limit: number) => string[] {
  const live = packs.filter((p) => p.status !== "NodeStatusDeleted" && p.status !== "NodeStatusBanned");
  const hay = live.map((p) => [p.id, p.name ?? "", p.description ?? "", p.author ?? ""].map((s) => s.toLowerCase()));
  return (query, limit) => {
    const term = query.toLowerCase();
    const out: string[] = [];
    for (let i = 0; i < live.length && out.length < limit; i++) if (hay[i]!.some((f) => f.includes(term))) out.push(live[i]!.id);
    return out;
  };
}
