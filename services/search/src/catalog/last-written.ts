import { readFile } from "node:fs/promises";
import { isRegistryUrl, loadCatalog } from "../adapters/catalog-source.ts";
import type { CatalogSnapshot, SnapshotMeta } from "../adapters/snapshot.ts";
import type { StoredNode } from "../domain/catalog-record.ts";

/** The last catalog written, kept in memory so a refresh need not read the snapshot back. */
interface KnownCatalog {
  records: StoredNode[];
  indexedAt: string;
}

/**
 * The last catalog written and what is known of it: on disk in `store` (the snapshot when
 * embedded; under Meilisearch, a registry mirror's own memory under DATA_DIR), and in memory.
 */
export class LastWrittenCatalog {
  private known: KnownCatalog | undefined;

  constructor(
    readonly store: CatalogSnapshot,
    /** Embedded: every catalog is the snapshot. Otherwise only a registry's is kept, for the next pass. */
    private readonly isSnapshot: boolean,
    /**
     * An index every process shares (Meilisearch): the previous catalog is read from it, since this
     * process's memory may be older than another worker's last pass (a pack deleted since would come back).
     */
    private readonly shared?: () => Promise<readonly StoredNode[]>,
  ) {}

  async write(records: StoredNode[], meta: Omit<SnapshotMeta, "nodes">): Promise<void> {
    if (this.isSnapshot || isRegistryUrl(meta.source)) await this.store.write(records, meta);
    this.known = { records, indexedAt: meta.indexedAt };
  }

  /** The snapshot was read back into the index (at start, or written by another process). */
  restored(records: StoredNode[], meta: SnapshotMeta | undefined): void {
    if (meta) this.known = { records, indexedAt: meta.indexedAt };
  }

  /** The size of the last catalog written, read from disk (a writer's baseline); undefined when there is no snapshot. */
  async writtenCount(): Promise<number | undefined> {
    if (!this.isSnapshot) return undefined;
    const meta = await this.store.readMeta();
    if (meta) return meta.nodes;
    const text = await readFile(this.store.path, "utf8").catch(() => "");
    return text.split("\n").filter((l) => l.trim() !== "").length;
  }

  /** The catalog a mirror of `from` goes on from: the one last written, when it came from there. */
  async previous(from: string): Promise<{ records: readonly StoredNode[]; meta: SnapshotMeta } | undefined> {
    const read = await this.store.readMeta();
    const meta = read?.source === from ? read : undefined;
    if (this.shared) {
      const records = await this.shared();
      // No memory of a pass here: a full one, which still keeps the index's versions and classes.
      return records.length === 0 ? undefined : { records, meta: meta ?? { source: from, indexedAt: "", nodes: records.length } };
    }
    if (!meta) return undefined;
    if (this.known?.indexedAt !== meta.indexedAt) {
      if (!(await this.store.exists())) return undefined;
      this.known = { records: (await loadCatalog(this.store.path)).records, indexedAt: meta.indexedAt };
    }
    return { records: this.known.records, meta };
  }

  /** A mirror pass that changed nothing moves its `listedAt` on. */
  async writeMeta(meta: SnapshotMeta): Promise<void> {
    await this.store.writeMeta(meta);
  }
}
