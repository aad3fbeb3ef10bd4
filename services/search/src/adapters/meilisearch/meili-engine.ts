import { Meilisearch, type SearchParams } from "meilisearch";
import type { StoredNode } from "../../domain/catalog-record.ts";
import type { EngineQuery, EngineResult, IndexProgress, SearchEngine } from "../../ports/search-engine.ts";
import { meiliUid, sameStemIdentityWords, toMeiliDocument, type MeiliDocument } from "./documents.ts";
import { lookupFilters, planMeiliQuery, sliceSegments } from "./query.ts";
import { MEILI_SETTINGS } from "./settings.ts";
import { blendedPopularity, popularityOrder } from "../../domain/popularity.ts";
import { DEFAULT_WEIGHTS } from "../../domain/ranking.ts";

const LOOKUP_PAGE = 1000;

export interface MeiliOptions {
  host: string;
  apiKey?: string;
  index: string;
  batchSize?: number;
}

/**
 * The SearchEngine on Meilisearch (MEILI_URL). Thin: documents, settings and filters come from
 * the pure modules beside it. A reindex fills a fresh index and swaps it with the live one, so
 * searches never see a half-built index.
 */
export class MeiliSearchEngine implements SearchEngine {
  readonly kind = "meilisearch" as const;
  private readonly client: Meilisearch;
  private prepared: Promise<void> | undefined;

  constructor(private readonly opts: MeiliOptions) {
    this.client = new Meilisearch({ host: opts.host, apiKey: opts.apiKey });
  }

  /** Settings and the experimental CONTAINS filter (substring rules), applied once at start. */
  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await this.client.updateExperimentalFeatures({ containsFilter: true });
      await this.ensureIndex(this.opts.index);
      await this.client.index(this.opts.index).updateSettings(MEILI_SETTINGS).waitTask();
    })().catch((err: unknown) => {
      this.prepared = undefined;
      throw err;
    });
    return this.prepared;
  }

  private async ensureIndex(uid: string): Promise<void> {
    try {
      await this.client.getIndex(uid);
    } catch {
      await this.client.createIndex(uid, { primaryKey: "uid" }).waitTask();
    }
  }

  async search(query: EngineQuery): Promise<EngineResult> {
    await this.prepare();
    const plan = planMeiliQuery(query);
    if (plan.empty) return { nodes: [], total: 0 };
    const index = this.client.index<MeiliDocument>(this.opts.index);
    const params = (filters: string[], extra: SearchParams): SearchParams => ({
      filter: [...plan.base, ...filters],
      sort: plan.sort,
      // Drop the most frequent words first (comfyui, nodes, ...) when not every word matches,
      // as the embedded engine weighs them least.
      matchingStrategy: "frequency",
      attributesToRetrieve: ["record"],
      ...extra,
    });
    // Exact counts per segment (hitsPerPage mode answers totalHits), then only the slices the page needs.
    const counts = await Promise.all(plan.segments.map((seg) => index.search(plan.q, params(seg, { hitsPerPage: 1, page: 1 }))));
    const totals = counts.map((c) => ("totalHits" in c ? (c.totalHits as number) : 0));
    const slices = sliceSegments(totals, query.offset, query.limit);
    const pages = await Promise.all(
      slices.map((s) => index.search(plan.q, params(plan.segments[s.segment]!, { offset: s.offset, limit: s.limit }))),
    );
    const nodes = pages.flatMap((p) => p.hits.map((h) => (h as unknown as { record: StoredNode }).record));
    return { nodes, total: totals.reduce((a, b) => a + b, 0) };
  }

  async get(id: string, { includeBanned }: { includeBanned: boolean }): Promise<StoredNode | undefined> {
    await this.prepare();
    try {
      const doc = await this.client.index<MeiliDocument>(this.opts.index).getDocument(meiliUid(id), { fields: ["record"] });
      const record = (doc as unknown as { record: StoredNode }).record;
      if (!record || record.id !== id) return undefined;
      if (!includeBanned && record.status === "NodeStatusBanned") return undefined;
      return record;
    } catch (err) {
      if ((err as { cause?: { code?: string } }).cause?.code === "document_not_found") return undefined;
      throw err;
    }
  }

  /** Every match of these filters, in popularity order (lookups match a handful of packs). */
  private async matching(filter: string[]): Promise<StoredNode[]> {
    await this.prepare();
    const index = this.client.index<MeiliDocument>(this.opts.index);
    const out: StoredNode[] = [];
    for (let offset = 0; ; offset += LOOKUP_PAGE) {
      const page = await index.search("", { filter, sort: ["rank:asc"], attributesToRetrieve: ["record"], offset, limit: LOOKUP_PAGE });
      out.push(...page.hits.map((h) => (h as unknown as { record: StoredNode }).record));
      if (page.hits.length < LOOKUP_PAGE) return out;
    }
  }

  async resolveId(id: string): Promise<string | undefined> {
    const lower = id.toLowerCase();
    return (await this.matching(lookupFilters.lowerId(id))).find((r) => r.id.toLowerCase() === lower)?.id;
  }

  async providersOf(name: string): Promise<StoredNode[]> {
    return this.matching(lookupFilters.providersOf(name));
  }

  async publishedBy(publisherId: string, { includeBanned }: { includeBanned: boolean }): Promise<StoredNode[]> {
    return this.matching(lookupFilters.publishedBy(publisherId, includeBanned));
  }

  async all(): Promise<readonly StoredNode[]> {
    return this.matching([]);
  }

  async replaceAll(records: readonly StoredNode[], onProgress?: (p: IndexProgress) => void): Promise<void> {
    await this.prepare();
    const given = records.filter((r) => r.status !== "NodeStatusDeleted");
    const live = Array.from(popularityOrder(given), (i) => given[i]!);
    const popularity = blendedPopularity(live, DEFAULT_WEIGHTS.percentileShare);
    const sameStem = sameStemIdentityWords(live);
    const fresh = `${this.opts.index}_build_${Date.now()}`;
    await this.client.createIndex(fresh, { primaryKey: "uid" }).waitTask();
    try {
      const index = this.client.index<MeiliDocument>(fresh);
      await index.updateSettings(MEILI_SETTINGS).waitTask();
      const batch = this.opts.batchSize ?? 5000;
      for (let i = 0; i < live.length; i += batch) {
        const docs = live.slice(i, i + batch).map((r, j) => toMeiliDocument(r, i + j, popularity[i + j], sameStem));
        const task = await index.addDocuments(docs).waitTask({ timeout: 600_000 });
        if (task.status !== "succeeded") throw new Error(`Meilisearch refused documents: ${JSON.stringify(task.error)}`);
        onProgress?.({ indexed: Math.min(i + batch, live.length), total: live.length });
      }
      const swap = await this.client.swapIndexes([{ indexes: [this.opts.index, fresh], rename: false }]).waitTask();
      if (swap.status !== "succeeded") throw new Error(`Meilisearch swap failed: ${JSON.stringify(swap.error)}`);
    } finally {
      await this.client
        .deleteIndex(fresh)
        .waitTask()
        .catch(() => undefined);
    }
  }

  async count(): Promise<number> {
    await this.prepare();
    const stats = await this.client.index(this.opts.index).getStats();
    return stats.numberOfDocuments;
  }

  async close(): Promise<void> {}
}
