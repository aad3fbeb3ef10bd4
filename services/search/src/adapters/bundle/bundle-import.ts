import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extract as tarExtract } from "tar-stream";
import { archiveSidecar, type ArchiveBlobs } from "../archives/archive-blobs.ts";
import { ArchiveIndex, isArchiveEntry, type ArchiveEntry } from "../archives/archive-index.ts";
import { archiveIndexPath } from "../archives/archive-service.ts";
import { keepVersionClasses, KeptClasses, versionClassesDir } from "../registry/version-classes.ts";
import {
  ARCHIVES,
  BLOB_RE,
  BUNDLE_FORMAT,
  CATALOG,
  MANIFEST,
  PRIVATE_PACKS,
  VERSION_CLASSES,
  type BundleManifest,
} from "./bundle-format.ts";

export interface ImportResult {
  manifest: BundleManifest;
  /** The catalog file the service then reads as its source (`DATA_DIR/search/bundle/catalog.ndjson`). */
  catalogPath: string;
  /** Archives the bundle carried, and how many of them were new here. */
  archives: number;
  added: number;
  /** Versions whose kept classes the bundle carried (written into DATA_DIR's kept folder). */
  versionClasses: number;
}

export class BundleError extends Error {}

export const bundleCatalogPath = (dataDir: string): string => join(dataDir, "search", "bundle", "catalog.ndjson");
/** The private packs the last bundle carried, added to the database when the service starts. */
export const bundlePrivatePacksPath = (dataDir: string): string => join(dataDir, "search", "bundle", PRIVATE_PACKS);

/**
 * Bring a bundle into DATA_DIR: its catalog replaces the last bundle's (written beside, then
 * renamed), its archives are added to the blob store (each blob checked against its name: the
 * hash of the bytes it holds) and to the archive index; the other versions' classes it carries are
 * kept as a read through keeps them. Archives and kept classes already here stay.
 */
export async function importBundle(bundle: string, dataDir: string, blobs: ArchiveBlobs): Promise<ImportResult> {
  const catalogPath = bundleCatalogPath(dataDir);
  await mkdir(dirname(catalogPath), { recursive: true });
  const catalogTmp = `${catalogPath}.${process.pid}.tmp`;
  const privateTmp = `${bundlePrivatePacksPath(dataDir)}.${process.pid}.tmp`;
  let privateSeen = false;
  let manifest: BundleManifest | undefined;
  let listed: ArchiveEntry[] = [];
  let catalogSeen = false;
  let versionClasses = 0;
  const stored = new Set<string>();
  const extract = tarExtract();
  const reading = pipeline(createReadStream(bundle), extract).catch((err: Error) => {
    extract.destroy(err);
  });
  try {
    for await (const tarEntry of extract) {
      const name = tarEntry.header.name;
      // tar-stream's entries are streamx streams, which Node's stream functions take as readables.
      const entry = tarEntry as unknown as Readable;
      const blob = BLOB_RE.exec(name);
      if (name === MANIFEST) {
        manifest = JSON.parse(await text(entry)) as BundleManifest;
        if (manifest.format !== BUNDLE_FORMAT)
          throw new BundleError(`${bundle}: bundle format ${manifest.format}, this service reads format ${BUNDLE_FORMAT}`);
      } else if (name === ARCHIVES) {
        listed = (await text(entry))
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l): unknown => JSON.parse(l))
          .filter(isArchiveEntry);
      } else if (name === VERSION_CLASSES) {
        for await (const line of createInterface({ input: entry, crlfDelay: Infinity })) {
          if (line.trim() === "") continue;
          const kept = KeptClasses.safeParse(JSON.parse(line));
          if (!kept.success)
            throw new BundleError(
              `${bundle}: ${VERSION_CLASSES} holds a line that is not {id, version, classes}: ${kept.error.issues[0]?.message ?? ""}`,
            );
          await keepVersionClasses(versionClassesDir(dataDir), kept.data);
          versionClasses++;
        }
      } else if (name === PRIVATE_PACKS) {
        await pipeline(entry, createWriteStream(privateTmp));
        privateSeen = true;
      } else if (name === CATALOG) {
        await pipeline(entry, createWriteStream(catalogTmp));
        catalogSeen = true;
      } else if (blob) {
        const staged = await blobs.stage(entry);
        if (staged.hash !== blob[1]) {
          await staged.discard();
          throw new BundleError(`${bundle}: ${name} holds bytes whose blake3 is ${staged.hash}: the bundle is damaged`);
        }
        await staged.commit(archiveSidecar(staged.hash, staged.size));
        stored.add(staged.hash);
      } else {
        entry.resume(); // not part of the format: skipped
      }
    }
    await reading;
    if (!manifest || !catalogSeen) throw new BundleError(`${bundle}: not a mirror bundle (no ${!manifest ? MANIFEST : CATALOG})`);
    const index = new ArchiveIndex(archiveIndexPath(dataDir));
    let added = 0;
    for (const e of listed) {
      if (!stored.has(e.blake3) && !(await blobs.stat(e.blake3))) continue;
      const known = await index.get(e.id, e.version);
      if (known?.blake3 === e.blake3) continue;
      await index.add(e);
      added++;
    }
    await rename(catalogTmp, catalogPath);
    if (privateSeen) await rename(privateTmp, bundlePrivatePacksPath(dataDir));
    return { manifest, catalogPath, archives: listed.length, added, versionClasses };
  } catch (err) {
    extract.destroy();
    await rm(catalogTmp, { force: true });
    await rm(privateTmp, { force: true });
    if (err instanceof BundleError) throw err;
    throw new BundleError(`${bundle}: could not be read as a mirror bundle: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function text(s: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
