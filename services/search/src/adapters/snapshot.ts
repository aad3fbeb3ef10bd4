import { createWriteStream, unwatchFile, watchFile, type Stats } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import type { StoredNode } from "../domain/catalog-record.ts";

/**
 * The embedded engine's persistence: the validated catalog as NDJSON under
 * `DATA_DIR/search/catalog.ndjson`, written to a temporary file and renamed into place, so a
 * reader sees the old file or the new one, never half of one. The server rebuilds its index
 * from it at start, and rebuilds again whenever another process (`pnpm reindex`, a worker)
 * renames a new one into place.
 */
/** What the snapshot holds, beside it (`catalog.meta.json`): for /readyz and the shrink check of a writer. */
export interface SnapshotMeta {
  source: string;
  indexedAt: string;
  nodes: number;
  /** A registry mirror: when the last pass began (the next one asks for packs updated since then). */
  listedAt?: string;
  /** A registry mirror: when the last full pass began. */
  fullAt?: string;
}

export class CatalogSnapshot {
  readonly path: string;
  readonly metaPath: string;
  private ownMtimes = new Set<number>();

  constructor(dataDir: string) {
    this.path = join(dataDir, "search", "catalog.ndjson");
    this.metaPath = join(dataDir, "search", "catalog.meta.json");
  }

  /** The meta of the last snapshot written, or undefined (none yet, or written by an older version). */
  async readMeta(): Promise<SnapshotMeta | undefined> {
    try {
      const m = JSON.parse(await readFile(this.metaPath, "utf8")) as Partial<SnapshotMeta>;
      if (typeof m.source === "string" && typeof m.indexedAt === "string" && typeof m.nodes === "number") return m as SnapshotMeta;
    } catch {
      /* none, or unreadable: treated alike */
    }
    return undefined;
  }

  async exists(): Promise<boolean> {
    return stat(this.path).then(
      () => true,
      () => false,
    );
  }

  async write(records: readonly StoredNode[], meta?: Omit<SnapshotMeta, "nodes">): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    // The meta first: a reader woken by the new snapshot finds the meta that goes with it.
    if (meta) await this.writeMeta({ ...meta, nodes: records.length });
    const tmp = `${this.path}.${process.pid}.${randomUUID()}.tmp`;
    try {
      const out = createWriteStream(tmp, { encoding: "utf8" });
      let chunk = "";
      for (const r of records) {
        chunk += JSON.stringify(r) + "\n";
        if (chunk.length > 1 << 20) {
          if (!out.write(chunk)) await once(out, "drain");
          chunk = "";
        }
      }
      out.end(chunk);
      await once(out, "finish");
      await new Promise<void>((resolve, reject) => out.close((err) => (err ? reject(err) : resolve())));
      await rename(tmp, this.path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const s = await stat(this.path);
    this.ownMtimes.add(s.mtimeMs);
  }

  /** The meta alone (a mirror pass that changed nothing moves its `listedAt` on). */
  async writeMeta(meta: SnapshotMeta): Promise<void> {
    await mkdir(dirname(this.metaPath), { recursive: true });
    // Unique per write: two refreshes may write at once in one worker (WORKER_CONCURRENCY).
    const tmpMeta = `${this.metaPath}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(tmpMeta, JSON.stringify(meta));
    await rename(tmpMeta, this.metaPath);
  }

  /** Call `onChange` when another process replaces the snapshot (polled: works on every filesystem and volume). */
  watch(onChange: () => void, intervalMs = 1000): () => void {
    const listener = (curr: Stats, prev: Stats) => {
      if (curr.mtimeMs === 0 || curr.mtimeMs === prev.mtimeMs) return;
      if (this.ownMtimes.delete(curr.mtimeMs)) return;
      onChange();
    };
    watchFile(this.path, { interval: intervalMs, persistent: false }, listener);
    return () => unwatchFile(this.path, listener);
  }
}
