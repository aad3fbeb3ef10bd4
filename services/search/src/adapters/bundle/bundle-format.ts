/**
 * A mirror bundle: one tar (ustar) carrying a mirror across an air gap.
 *
 *   bundle.json       {format: 1, createdAt, source, nodes, archives}
 *   archives.ndjson   one ArchiveEntry a line: pack id, version, blake3, SHA-256, size
 *   catalog.ndjson    the catalog snapshot as the mirror served it (packs, versions, classes)
 *   blobs/<blake3>    each archive's bytes, named by their hash
 *
 * Nothing read from a bundle names a path: the three files are matched by these exact names,
 * and a blob is stored under the hash its bytes have, which must equal its name.
 */
export const BUNDLE_FORMAT = 1;
export const MANIFEST = "bundle.json";
export const ARCHIVES = "archives.ndjson";
export const CATALOG = "catalog.ndjson";
export const BLOB_RE = /^blobs\/([0-9a-f]{64})$/;

export interface BundleManifest {
  format: number;
  createdAt: string;
  /** Where the catalog was mirrored from. */
  source: string | null;
  nodes: number;
  archives: number;
}

export const isBundlePath = (source: string): boolean => /\.tar$/i.test(source) && !/^https?:\/\//i.test(source);
