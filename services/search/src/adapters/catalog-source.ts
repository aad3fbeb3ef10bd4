import { parseCatalogSource } from "@app/platform";
import type { StoredNode } from "../domain/catalog-record.ts";
import { FileSource } from "./file-source.ts";
import { RegistryApiSource, type RegistryLoadOptions } from "./registry/registry-source.ts";
import { readAllRecords, type CatalogSource, type LoadProgress } from "../ports/source-base.ts";

export type { BadRecord, CatalogSource, LoadOptions, LoadProgress } from "../ports/source-base.ts";
export type { MirrorOptions } from "./registry/mirror-options.ts";

/** Options for a source named by a string: any source's, and a registry's own (a file ignores them). */
export type SourceOptions = RegistryLoadOptions;

/** A source named by a string (a reindex job's, a snapshot's) is a registry's URL: the one parse CATALOG_SOURCE has. */
export const isRegistryUrl = (source: string): boolean => parseCatalogSource(source).kind === "registry";

export function catalogSource(source: string): CatalogSource<SourceOptions> {
  return isRegistryUrl(source) ? new RegistryApiSource(source) : new FileSource(source);
}

/** Read a whole source (a file or registry named by a string, or a source) into memory, with counts. */
export async function loadCatalog(
  source: string | CatalogSource<SourceOptions>,
  opts: SourceOptions = {},
): Promise<{ records: StoredNode[]; progress: LoadProgress }> {
  return readAllRecords(typeof source === "string" ? catalogSource(source) : source, opts);
}
