import type { StoredNode } from "../../domain/catalog-record.ts";
import type { EngineQuery, EngineResult, IndexProgress, SearchEngine } from "../../ports/search-engine.ts";
import { buildIndex } from "./build-index.ts";
import { lookupsOf } from "./lookups.ts";
import { IndexSearcher } from "./search-index.ts";

/**
 * The embedded SearchEngine: an in-process inverted index. A rebuild makes a whole new
 * IndexData and swaps one reference, so every search sees either the old index or the new one.
 */
export class EmbeddedSearchEngine implements SearchEngine {
  readonly kind = "embedded" as const;
  private current: IndexSearcher | undefined;
  private rebuild: Promise<void> = Promise.resolve();

  async search(query: EngineQuery): Promise<EngineResult> {
    if (!this.current) return { nodes: [], total: 0 };
    return this.current.search(query);
  }

  async get(id: string, { includeBanned }: { includeBanned: boolean }): Promise<StoredNode | undefined> {
    const data = this.current?.data;
    const d = data?.byId.get(id);
    if (data === undefined || d === undefined) return undefined;
    if (!includeBanned && data.banned[d] === 1) return undefined;
    return data.docs[d];
  }

  async resolveId(id: string): Promise<string | undefined> {
    const data = this.current?.data;
    return data ? lookupsOf(data).idByLowerCase.get(id.toLowerCase()) : undefined;
  }

  async providersOf(name: string): Promise<StoredNode[]> {
    const data = this.current?.data;
    const list = data ? lookupsOf(data).byClass.get(name) : undefined;
    return (list ?? []).filter((r) => r.status !== "NodeStatusBanned");
  }

  async publishedBy(publisherId: string, { includeBanned }: { includeBanned: boolean }): Promise<StoredNode[]> {
    const data = this.current?.data;
    const list = data ? lookupsOf(data).byPublisher.get(publisherId) : undefined;
    return (list ?? []).filter((r) => includeBanned || r.status !== "NodeStatusBanned");
  }

  async all(): Promise<readonly StoredNode[]> {
    return this.current?.data.docs ?? [];
  }

  replaceAll(records: readonly StoredNode[], onProgress?: (p: IndexProgress) => void): Promise<void> {
    // Rebuilds run one after another, so the last one asked for is the one left serving.
    const next = this.rebuild
      .catch(() => undefined)
      .then(async () => {
        const data = await buildIndex(records, (indexed, total) => onProgress?.({ indexed, total }));
        this.current = new IndexSearcher(data);
      });
    this.rebuild = next;
    return next;
  }

  async count(): Promise<number> {
    return this.current?.data.n ?? 0;
  }

  async close(): Promise<void> {
    await this.rebuild.catch(() => undefined);
  }
}
