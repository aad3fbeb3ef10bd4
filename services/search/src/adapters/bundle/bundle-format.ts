/**
 * A mirror bundle: one tar (ustar) carrying a mirror across an air gap.
 *
 *   bundle.json              {format: 1, createdAt, source, nodes, archives, versionClasses}
 *   archives.ndjson          one ArchiveEntry a line: pack id, version, blake3, SHA-256, size
 *   catalog.ndjson           the catalog snapshot as the mirror served it (packs, versions, classes)
 *   version-classes.ndjson   other versions' classes the mirror kept, one {id, version, classes} a line
 *   private-packs.ndjson     teams' own packs published here, one a line (private-packs/bundle.ts)
 *   blobs/<blake3>           each archive's bytes, named by their hash
 *
 * Nothing read from a bundle names a path: the four files are matched by these exact names, each
 * line checked against its schema (a kept version's file is named by the hash of its id and
 * version), and a blob is stored under the hash its bytes have, which must equal its name. A bundle
 * without version-classes.ndjson (written before it existed) carries no other versions' classes.
 */
export const BUNDLE_FORMAT = 1;
export const MANIFEST = "bundle.json";
export const ARCHIVES = "archives.ndjson";
export const CATALOG = "catalog.ndjson";
export const VERSION_CLASSES = "version-classes.ndjson";
export const PRIVATE_PACKS = "private-packs.ndjson";
export const BLOB_RE = /^blobs\/([0-9a-f]{64})$/;

export interface BundleManifest {
  format: number;
  createdAt: string;
  /** Where the catalog was mirrored from. */
  source: string | null;
  nodes: number;
  archives: number;
  /** Versions whose kept classes it carries (absent in bundles written before they were carried). */
  versionClasses?: number;
}
