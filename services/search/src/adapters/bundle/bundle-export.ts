import { createWriteStream } from "node:fs";
import { open, rename, rm, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pack as tarPack, type Pack } from "tar-stream";
import type { ArchiveBlobs } from "../archives/archive-blobs.ts";
import { ArchiveIndex, type ArchiveEntry } from "../archives/archive-index.ts";
import { archiveIndexPath } from "../archives/archive-service.ts";
import { allKeptVersionClasses, versionClassesDir } from "../registry/version-classes.ts";
import { CatalogSnapshot } from "../snapshot.ts";
import type { StoredNode } from "../../domain/catalog-record.ts";
import { versionsOf } from "../../domain/versions.ts";
import { ARCHIVES, BUNDLE_FORMAT, CATALOG, MANIFEST, PRIVATE_PACKS, VERSION_CLASSES, type BundleManifest } from "./bundle-format.ts";

/** Teams' private packs to carry (their lines, and the archives they need). */
export interface PrivatePackExport {
  text: string;
  packs: number;
  blobs: ReadonlySet<string>;
}

export interface ExportResult extends BundleManifest {
  bytes: number;
  privatePacks: number;
}

/**
 * Write DATA_DIR's catalog snapshot, the other versions' classes it kept and every stored archive to one tar, while the instance
 * may be running: the snapshot is replaced by rename, so the file opened here stays whole; the
 * bundle is written beside `out` and renamed into place when complete.
 */
export async function exportBundle(
  dataDir: string,
  blobs: ArchiveBlobs,
  out: string,
  onProgress?: (done: number, of: number) => void,
  privatePacks?: PrivatePackExport,
): Promise<ExportResult> {
  const snapshot = new CatalogSnapshot(dataDir);
  const catalog = await open(snapshot.path, "r").catch((err: NodeJS.ErrnoException) => {
    throw new Error(err.code === "ENOENT" ? `no catalog under ${dataDir} (${snapshot.path}): mirror first` : err.message);
  });
  try {
    const catalogSize = (await catalog.stat()).size;
    const meta = await snapshot.readMeta();
    const entries: { entry: ArchiveEntry; size: number }[] = [];
    for (const entry of await new ArchiveIndex(archiveIndexPath(dataDir)).all()) {
      const st = await blobs.stat(entry.blake3);
      if (st) entries.push({ entry, size: st.size });
    }
    const nodes = meta?.nodes ?? (await countLines(catalog.createReadStream({ autoClose: false, start: 0 })));
    const kept: string[] = [];
    const catalogVersions = () => versionKeys(catalog.createReadStream({ autoClose: false, start: 0 }));
    for await (const k of allKeptVersionClasses(versionClassesDir(dataDir), catalogVersions)) kept.push(`${JSON.stringify(k)}\n`);
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      createdAt: new Date().toISOString(),
      source: meta?.source ?? null,
      nodes,
      archives: entries.length,
      versionClasses: kept.length,
    };
    const tmp = `${out}.${process.pid}.tmp`;
    const tar = tarPack();
    const written = pipeline(tar, createWriteStream(tmp));
    try {
      await addText(tar, MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
      await addText(tar, ARCHIVES, entries.map((e) => `${JSON.stringify(e.entry)}\n`).join(""));
      await addText(tar, VERSION_CLASSES, kept.join(""));
      if (privatePacks) await addText(tar, PRIVATE_PACKS, privatePacks.text);
      await addStream(
        tar,
        CATALOG,
        catalogSize,
        catalog.createReadStream({ autoClose: false, start: 0, end: Math.max(0, catalogSize - 1) }),
      );
      const blobsDone = new Set<string>();
      for (const [i, { entry, size }] of entries.entries()) {
        // Two versions with the same bytes share one blob.
        if (!blobsDone.has(entry.blake3)) await addStream(tar, `blobs/${entry.blake3}`, size, await blobs.read(entry.blake3));
        blobsDone.add(entry.blake3);
        onProgress?.(i + 1, entries.length);
      }
      for (const hash of privatePacks?.blobs ?? []) {
        const st = blobsDone.has(hash) ? null : await blobs.stat(hash);
        if (st) await addStream(tar, `blobs/${hash}`, st.size, await blobs.read(hash));
        blobsDone.add(hash);
      }
      tar.finalize();
      await written;
    } catch (err) {
      tar.destroy(err as Error);
      await written.catch(() => undefined);
      await rm(tmp, { force: true });
      throw err;
    }
    await rename(tmp, out);
    return { ...manifest, bytes: (await stat(out)).size, privatePacks: privatePacks?.packs ?? 0 };
  } finally {
    await catalog.close();
  }
}

function addText(tar: Pack, name: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => tar.entry({ name, mtime: new Date() }, text, (err) => (err ? reject(err) : resolve())));
}

async function addStream(tar: Pack, name: string, size: number, body: Readable): Promise<void> {
  const sink = tar.entry({ name, size, mtime: new Date() });
  await pipeline(body, sink);
}

/** Every pack's versions in a catalog snapshot, as `{id, version}`. */
async function versionKeys(s: Readable): Promise<{ id: string; version: string }[]> {
  const keys: { id: string; version: string }[] = [];
  for await (const line of createInterface({ input: s, crlfDelay: Infinity })) {
    if (line.trim() === "") continue;
    const pack = JSON.parse(line) as StoredNode;
    for (const v of versionsOf(pack)) if (v.version) keys.push({ id: pack.id, version: v.version });
  }
  return keys;
}

async function countLines(s: Readable): Promise<number> {
  let n = 0;
  for await (const chunk of s) for (const b of chunk as Buffer) if (b === 10) n++;
  return n;
}
