import { createWriteStream, unwatchFile, watchFile, type Stats } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { once } from "node:events";
import type { StoredNode } from "../domain/catalog-record.ts";

/**
 * The embedded engine's persistence: the validated catalog as NDJSON under
 * `DATA_DIR/search/catalog.ndjson`, written to a temporary file and renamed into place, so a
 * reader sees the old file or the new one, never half of one. The server rebuilds its index
 * from it at start, and rebuilds again whenever another process (`pnpm reindex`, a worker)
 * renames a new one into place.
 */
export class CatalogSnapshot {
  readonly path: string;
  private ownMtimes = new Set<number>();

  constructor(dataDir: string) {
    this.path = join(dataDir, "search", "catalog.ndjson");
  }

  async exists(): Promise<boolean> {
    return stat(this.path).then(() => true, () => false);
  }

  async write(records: readonly StoredNode[]): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.${Date.now()}.tmp`;
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
