import { createHash } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { archiveBytes, demoCatalog, demoVersions } from "@app/demo-catalog";
import { archiveSidecar, type ArchiveBlobs } from "../archives/archive-blobs.ts";
import { ArchiveIndex } from "../archives/archive-index.ts";
import { archiveIndexPath } from "../archives/archive-service.ts";

const STORE_CONCURRENCY = 8;

/** The demo's catalog file, read as a file source once written. */
export const demoCatalogPath = (dataDir: string): string => join(dataDir, "search", "demo", "demo-catalog.ndjson");

export interface DemoInstall {
  catalogPath: string;
  nodes: number;
  /** Archives the demo's versions have, and how many of them were new here. */
  archives: number;
  added: number;
}

/**
 * Lay the demo into DATA_DIR as a bundle would be: its catalog file (written beside, then
 * renamed), and an archive for each of its versions in the blob store and the archive index, so
 * its packs install with no network. Archives already held stay (the same seed makes the same bytes).
 */
export async function installDemo(dataDir: string, blobs: ArchiveBlobs): Promise<DemoInstall> {
  const nodes = demoCatalog();
  const index = new ArchiveIndex(archiveIndexPath(dataDir));
  const held = new Set((await index.all()).map((e) => `${e.id}@${e.version}`));
  const wanted = nodes.flatMap((node) => demoVersions(node).map((v) => ({ id: node.id, version: v.version })));
  const missing = wanted.filter((w) => !held.has(`${w.id}@${w.version}`));
  // A few at once: each blob is made durable on its own, and the waits overlap.
  let next = 0;
  const store = async () => {
    while (next < missing.length) {
      const { id, version } = missing[next++]!;
      const bytes = archiveBytes(id, version);
      const staged = await blobs.stage(Readable.from([bytes]));
      await staged.commit(archiveSidecar(staged.hash, staged.size));
      await index.add({
        id,
        version,
        blake3: staged.hash,
        sha256: createHash("sha256").update(bytes).digest("base64"),
        size: staged.size,
        storedAt: new Date().toISOString(),
      });
    }
  };
  await Promise.all(Array.from({ length: STORE_CONCURRENCY }, store));
  const catalogPath = demoCatalogPath(dataDir);
  await mkdir(dirname(catalogPath), { recursive: true });
  const tmp = `${catalogPath}.${process.pid}.tmp`;
  await writeFile(tmp, nodes.map((n) => JSON.stringify(n)).join("\n") + "\n");
  await rename(tmp, catalogPath);
  return { catalogPath, nodes: nodes.length, archives: wanted.length, added: missing.length };
}
