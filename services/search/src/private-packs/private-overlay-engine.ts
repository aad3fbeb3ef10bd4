import type { Logger } from "@app/platform";
import type { EngineQuery, EngineResult, IndexProgress, SearchEngine } from "../ports/search-engine.ts";
import type { StoredNode } from "../domain/catalog-record.ts";
import type { MirrorNamespace } from "./domain/mirror-namespace.ts";
import { PRIVATE_TAG, privateRecords } from "./private-records.ts";
import type { PrivatePackRepository } from "./store/private-pack-repository.ts";

export interface OverlayStatus {
  privatePacks: number;
  /** Mirrored packs not served because a private pack holds their id. */
  hiddenMirrorPacks: string[];
}

/**
 * The search engine with the private packs laid over the mirror. Every catalog the service
 * indexes (a refresh, a reindex, a snapshot, a bundle) passes through `replaceAll`, which indexes
 * it together with the private packs read from the database, so no catalog ever replaces them.
 * A mirrored pack whose id a private pack holds (case-insensitively) is hidden, logged and
 * counted. Reads go to the inner engine unchanged.
 */
export class PrivateOverlayEngine implements SearchEngine {
  readonly kind: SearchEngine["kind"];
  private mirror: readonly StoredNode[] = [];
  /** False until a catalog has passed through here: the inner engine may already hold one (Meilisearch keeps its index). */
  private mirrorKnown = false;
  private privates: StoredNode[] = [];
  private mirrorIds = new Set<string>();
  private mirrorPublishers = new Set<string>();
  private hidden: string[] = [];
  private kept: StoredNode[] = [];
  /** Index builds, one at a time, each from the latest mirror and private packs. */
  private building: Promise<void> = Promise.resolve();
  private seenRevision = -1;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly inner: SearchEngine,
    private readonly repo: PrivatePackRepository,
    private readonly logger: Logger,
  ) {
    this.kind = inner.kind;
  }

  /** What the mirror alone holds: the ids a private pack may not take. */
  readonly namespace: MirrorNamespace = {
    holdsNode: async (id) => this.mirrorIds.has(id.toLowerCase()),
    holdsPublisher: async (id) => this.mirrorPublishers.has(id.toLowerCase()),
  };

  replaceAll(records: readonly StoredNode[], onProgress?: (p: IndexProgress) => void): Promise<void> {
    return this.rebuild(() => {
      this.mirror = records;
      this.mirrorKnown = true;
      this.mirrorIds = new Set(records.map((r) => r.id.toLowerCase()));
      this.mirrorPublishers = new Set(records.flatMap((r) => (r.publisher?.id ? [r.publisher.id.toLowerCase()] : [])));
    }, onProgress);
  }

  /** Reads the private packs again (after a publish or a status change) and indexes them with the mirror. */
  refreshPrivate(): Promise<void> {
    return this.rebuild(async () => {
      this.seenRevision = await this.repo.revision();
      this.privates = await privateRecords(this.repo);
    });
  }

  /**
   * Reads the private packs again whenever the database's revision moves: another replica (or
   * the CLI) published or changed one. A failed poll is logged and tried at the next tick.
   */
  watch(everyMs: number): void {
    this.timer = setInterval(() => {
      void this.repo
        .revision()
        .then((r) => (r !== this.seenRevision ? this.refreshPrivate() : undefined))
        .catch((err: unknown) => this.logger.warn({ err }, "could not read the private packs' revision; tried again at the next tick"));
    }, everyMs);
    this.timer.unref();
  }

  /** The mirror alone, minus the packs hidden behind private ones: what archive prefetching reads. */
  mirrorOnly(): SearchEngine {
    return Object.assign(Object.create(this) as SearchEngine, { all: async () => this.kept });
  }

  status(): OverlayStatus {
    return { privatePacks: this.privates.length, hiddenMirrorPacks: [...this.hidden] };
  }

  private rebuild(update: () => void | Promise<void>, onProgress?: (p: IndexProgress) => void): Promise<void> {
    const run = this.building.then(async () => {
      await update();
      if (!this.mirrorKnown) await this.adoptInnerCatalog();
      await this.inner.replaceAll(this.merged(), onProgress);
    });
    this.building = run.catch(() => undefined);
    return run;
  }

  /** The catalog the inner engine holds (less the private packs it was given before), taken as the mirror. */
  private async adoptInnerCatalog(): Promise<void> {
    const own = new Set(this.privates.map((p) => `${p.id.toLowerCase()}\u0000${p.publisher?.id?.toLowerCase()}`));
    const records = (await this.inner.all()).filter(
      (r) => !own.has(`${r.id.toLowerCase()}\u0000${r.publisher?.id?.toLowerCase()}`) && !r.tags?.includes(PRIVATE_TAG),
    );
    this.mirror = records;
    this.mirrorKnown = true;
    this.mirrorIds = new Set(records.map((r) => r.id.toLowerCase()));
    this.mirrorPublishers = new Set(records.flatMap((r) => (r.publisher?.id ? [r.publisher.id.toLowerCase()] : [])));
  }

  private merged(): StoredNode[] {
    const owners = new Map(this.privates.map((p) => [p.id.toLowerCase(), p.publisher?.id?.toLowerCase()]));
    const hidden: string[] = [];
    const kept: StoredNode[] = [];
    for (const r of this.mirror) {
      const owner = owners.get(r.id.toLowerCase());
      if (owner === undefined) kept.push(r);
      // A record that is a private pack itself (an engine's own listing fed back) is not a collision.
      else if (r.publisher?.id?.toLowerCase() !== owner) hidden.push(r.id);
    }
    for (const id of hidden)
      if (!this.hidden.includes(id))
        this.logger.warn({ node: id }, "a mirrored pack has the id of a private pack: the mirror's copy is hidden");
    this.hidden = hidden;
    this.kept = kept;
    return [...kept, ...this.privates];
  }

  search(query: EngineQuery): Promise<EngineResult> {
    return this.inner.search(query);
  }
  get(id: string, opts: { includeBanned: boolean }): Promise<StoredNode | undefined> {
    return this.inner.get(id, opts);
  }
  resolveId(id: string): Promise<string | undefined> {
    return this.inner.resolveId(id);
  }
  providersOf(name: string): Promise<StoredNode[]> {
    return this.inner.providersOf(name);
  }
  publishedBy(publisherId: string, opts: { includeBanned: boolean }): Promise<StoredNode[]> {
    return this.inner.publishedBy(publisherId, opts);
  }
  all(): Promise<readonly StoredNode[]> {
    return this.inner.all();
  }
  count(): Promise<number> {
    return this.inner.count();
  }
  close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    return this.inner.close();
  }
}
