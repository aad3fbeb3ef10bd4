import type { StoredNode } from "../domain/catalog-record.ts";

/** What an engine is asked: already validated and trimmed by the query layer. */
export interface EngineQuery {
  search?: string;
  repositoryUrl?: string;
  appNode?: string;
  os?: string;
  accelerator?: string;
  includeBanned: boolean;
  offset: number;
  limit: number;
}

export interface EngineResult {
  nodes: StoredNode[];
  total: number;
}

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
  /** Build a fresh index from these records and swap it in at once; searches meanwhile answer from the old one. */
  replaceAll(records: readonly StoredNode[], onProgress?: (p: IndexProgress) => void): Promise<void>;
  count(): Promise<number>;
  close(): Promise<void>;
}
