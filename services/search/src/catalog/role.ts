/**
 * "server" (default): load at start, keep a URL source mirrored and, embedded, follow the
 * snapshot file. "writer" (the reindex CLI, a worker process): load nothing; a reindex only
 * writes the snapshot (embedded) or swaps the remote index (Meilisearch).
 */
export type CatalogRole = "server" | "writer";

/** Everything the two roles do differently, decided here once. */
export interface RoleRules {
  /**
   * Serves queries from this process: loads at start, follows the snapshot, refreshes on a
   * schedule, and a new catalog is compared with the index it serves. A writer compares with
   * the last catalog written, since another process may have written since.
   */
  serves: boolean;
  /** Swaps a new catalog into the engine: a server, or a writer whose engine every process shares (Meilisearch). */
  swapsIn: boolean;
}

export function roleRules(role: CatalogRole, engineKind: "embedded" | "meilisearch"): RoleRules {
  const serves = role === "server";
  return { serves, swapsIn: serves || engineKind !== "embedded" };
}
