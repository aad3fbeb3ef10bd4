import type { StoredNode } from "../domain/catalog-record.ts";
import { FileSource } from "./file-source.ts";
import { RegistryApiSource, type RegistryLoadOptions } from "./registry/registry-source.ts";
import type { CatalogSource, LoadProgress } from "./source-base.ts";

export type { BadRecord, CatalogSource, LoadOptions, LoadProgress } from "./source-base.ts";
export type { MirrorOptions } from "./registry/mirror-options.ts";

/** Options for a source named by a string: any source's, and a registry's own (a file ignores them). */
export type SourceOptions = RegistryLoadOptions;

export const isRegistryUrl = (source: string): boolean => /^https?:\/\//i.test(source);

export function catalogSource(source: string): CatalogSource<SourceOptions> {
  return isRegistryUrl(source) ? new RegistryApiSource(source) : new FileSource(source);
}

/** Read a whole source into memory, with counts. */
export async function loadCatalog(source: string | CatalogSource<SourceOptions>, opts: SourceOptions = {}): Promise<{ records: StoredNode[]; progress: LoadProgress }> {
  const src = typeof source === "string" ? catalogSource(source) : source;
  const records: StoredNode[] = [];
  let last: LoadProgress = { read: 0, indexed: 0, skipped: 0 };
  for await (const r of src.records({ ...opts, onProgress: (p) => { last = p; opts.onProgress?.(p); } })) records.push(r);
  return { records, progress: last };
}
