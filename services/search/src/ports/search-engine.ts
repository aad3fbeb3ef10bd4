import type { StoredNode } from "../domain/catalog-record.ts";
import type { EngineQuery, EngineResult } from "../domain/engine-query.ts";

export type { EngineQuery, EngineResult };

export interface IndexProgress {
  indexed: number;
  total: number;
}

/**
 * The SearchEngine port. Two implementations: the embedded in-process index (default) and
 * Meilisearch (MEILI_URL). Both pass test/engine-conformance.ts unchanged.
 *
 * Deleted nodes are never returned; banned nodes only with includeBanned.
 */
export interface SearchEngine {
  readonly kind: "embedded" | "meilisearch";
  search(query: EngineQuery): Promise<EngineResult>;
  get(id: string, opts: { includeBanned: boolean }): Promise<StoredNode | undefined>;
  /** The id of the pack whose id equals `id` but for case (the registry answers those with a 302), banned ones included. */
  resolveId(id: string): Promise<string | undefined>;
  /**
   * The packs that provide the node class `name` (an exact app node name of their install-path
   * version) or preempt it, in popularity order; banned ones never. The route orders them as
   * the registry does (see domain/class-providers.ts).
   */
  providersOf(name: string): Promise<StoredNode[]>;
  /** A publisher's packs (exact `publisher.id`), in popularity order. */
  publishedBy(publisherId: string, opts: { includeBanned: boolean }): Promise<StoredNode[]>;
  /** Every pack, banned ones included, in popularity order: what the all-versions list reads. */
  all(): Promise<readonly StoredNode[]>;
  /** Build a fresh index from these records and swap it in at once; searches meanwhile answer from the old one. */
  replaceAll(records: readonly StoredNode[], onProgress?: (p: IndexProgress) => void): Promise<void>;
  count(): Promise<number>;
  close(): Promise<void>;
}
