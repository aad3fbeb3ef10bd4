import type { CatalogSourceConfig, Config, Logger } from "@app/platform";
import { createArchiveBlobs } from "../archives/archive-blobs.ts";
import { importBundle } from "./bundle-import.ts";

/**
 * The source a server reads. CATALOG_SOURCE=<bundle.tar>: the bundle is imported into DATA_DIR
 * first, and the service then reads the bundle's catalog as a file source (read before it is
 * ready, never refreshed from a network). Any other source is read as it is.
 */
export async function importedCatalogSource(config: Config, logger: Logger): Promise<CatalogSourceConfig> {
  const source = config.CATALOG_SOURCE;
  if (source.kind !== "bundle") return source;
  const blobs = await createArchiveBlobs(config);
  try {
    const t0 = performance.now();
    const r = await importBundle(source.path, config.DATA_DIR, blobs);
    logger.info({ bundle: source.path, createdAt: r.manifest.createdAt, mirroredFrom: r.manifest.source, nodes: r.manifest.nodes, archives: r.archives, added: r.added, versionClasses: r.versionClasses, ms: Math.round(performance.now() - t0) }, "mirror bundle imported");
    return { kind: "file", path: r.catalogPath };
  } finally {
    await blobs.close();
  }
}
