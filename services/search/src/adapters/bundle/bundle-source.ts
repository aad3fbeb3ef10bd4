import type { CatalogSourceConfig, Config, Logger } from "@app/platform";
import { createArchiveBlobs } from "../archives/archive-blobs.ts";
import { installDemo } from "../demo/demo-source.ts";
import { importBundle } from "./bundle-import.ts";

/**
 * The source a server reads. CATALOG_SOURCE=<bundle.tar>: the bundle is imported into DATA_DIR
 * first, and the service then reads the bundle's catalog as a file source (read before it is
 * ready, never refreshed from a network). CATALOG_SOURCE=demo: the demo catalog built in is laid
 * out the same way. Any other source is read as it is.
 */
export async function importedCatalogSource(config: Config, logger: Logger): Promise<CatalogSourceConfig> {
  const source = config.CATALOG_SOURCE;
  if (source.kind !== "bundle" && source.kind !== "demo") return source;
  const blobs = await createArchiveBlobs(config);
  try {
    if (source.kind === "demo") {
      const t0 = performance.now();
      const d = await installDemo(config.DATA_DIR, blobs);
      logger.info(
        { nodes: d.nodes, archives: d.archives, added: d.added, ms: Math.round(performance.now() - t0) },
        "demo catalog laid out (CATALOG_SOURCE=demo: every version installs offline)",
      );
      return { kind: "file", path: d.catalogPath };
    }
    const t0 = performance.now();
    const r = await importBundle(source.path, config.DATA_DIR, blobs);
    logger.info(
      {
        bundle: source.path,
        createdAt: r.manifest.createdAt,
        mirroredFrom: r.manifest.source,
        nodes: r.manifest.nodes,
        archives: r.archives,
        added: r.added,
        versionClasses: r.versionClasses,
        ms: Math.round(performance.now() - t0),
      },
      "mirror bundle imported",
    );
    return { kind: "file", path: r.catalogPath };
  } finally {
    await blobs.close();
  }
}
