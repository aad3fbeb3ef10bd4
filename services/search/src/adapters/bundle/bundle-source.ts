import type { Config, Logger } from "@app/platform";
import { createArchiveBlobs } from "../archives/archive-blobs.ts";
import { installDemo, isDemoSource } from "../demo/demo-source.ts";
import { isBundlePath } from "./bundle-format.ts";
import { importBundle } from "./bundle-import.ts";

/**
 * CATALOG_SOURCE=<bundle.tar>: the bundle is imported into DATA_DIR before the search service
 * starts, and the service then reads the bundle's catalog as a file source (read before it is
 * ready, never refreshed from a network). CATALOG_SOURCE=demo: the demo catalog built in is laid
 * out the same way. Any other source passes through unchanged.
 */
export async function withBundleImported(config: Config, logger: Logger): Promise<Config> {
  const source = config.CATALOG_SOURCE;
  if (!source || !(isBundlePath(source) || isDemoSource(source))) return config;
  const blobs = await createArchiveBlobs(config);
  try {
    if (isDemoSource(source)) {
      const t0 = performance.now();
      const d = await installDemo(config.DATA_DIR, blobs);
      logger.info({ nodes: d.nodes, archives: d.archives, added: d.added, ms: Math.round(performance.now() - t0) }, "demo catalog laid out (CATALOG_SOURCE=demo: every version installs offline)");
      return { ...config, CATALOG_SOURCE: d.catalogPath };
    }
    const t0 = performance.now();
    const r = await importBundle(source, config.DATA_DIR, blobs);
    logger.info({ bundle: source, createdAt: r.manifest.createdAt, mirroredFrom: r.manifest.source, nodes: r.manifest.nodes, archives: r.archives, added: r.added, versionClasses: r.versionClasses, ms: Math.round(performance.now() - t0) }, "mirror bundle imported");
    return { ...config, CATALOG_SOURCE: r.catalogPath };
  } finally {
    await blobs.close();
  }
}
