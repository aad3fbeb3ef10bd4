import { join } from "node:path";
import type { Config, Logger } from "@app/platform";
import type { SearchEngine } from "../../ports/search-engine.ts";
import { servedLinks, UPSTREAM_LINKS, type ArchiveLinks } from "../../domain/archive-links.ts";
import { createArchiveBlobs, type ArchiveBlobs } from "./archive-blobs.ts";
import { ArchiveIndex } from "./archive-index.ts";
import { ArchivePrefetcher } from "./archive-prefetch.ts";
import { ArchiveStore } from "./archive-store.ts";

/**
 * What /readyz shows under `catalog.archives`. `latest`/`all`: `stored` of the `total` the
 * catalog wants, `failed` after every try (with the last reasons). `on-demand`/`off`: `stored`
 * is every archive held, and `total`/`failed` are null (nothing is wanted ahead of a request).
 */
export interface ArchivesStatus {
  mode: Config["MIRROR_ARCHIVES"];
  stored: number;
  total: number | null;
  failed: number | null;
  lastErrors: string[];
}

/** The node archives of the search service: the store its route serves, the links its versions carry, the prefetch. */
export interface ArchiveService {
  links: ArchiveLinks;
  store: ArchiveStore;
  /** MIRROR_ARCHIVES=off: only archives already stored (a bundle's) are served; nothing is fetched. */
  fetchesFromUpstream: boolean;
  status(): ArchivesStatus;
  close(): Promise<void>;
}

/** The served catalog's identity: it changes with each landing (a mirror pass's, a reindex's, a snapshot's). */
export function catalogVersionOf(s: { indexedAt: string | null; nodes: number; state: string }): string {
  return `${s.state}|${s.indexedAt}|${s.nodes}`;
}

export function archiveIndexPath(dataDir: string): string {
  return join(dataDir, "search", "archives.ndjson");
}

export interface ArchiveServiceDeps {
  engine: SearchEngine;
  /** Changes whenever a new catalog is served (the prefetch looks again then). */
  catalogVersion(): string;
  blobs?: ArchiveBlobs;
  /** Tests shorten the prefetch's poll and backoff. */
  prefetch?: { pollMs?: number; retryDelayMs?: number; attempts?: number };
}

export async function createArchiveService(config: Config, logger: Logger, deps: ArchiveServiceDeps): Promise<ArchiveService> {
  const blobs = deps.blobs ?? (await createArchiveBlobs(config));
  const index = new ArchiveIndex(archiveIndexPath(config.DATA_DIR));
  await index.refresh();
  const store = new ArchiveStore(blobs, index, config.ARCHIVE_TIMEOUT_MS);
  const mode = config.MIRROR_ARCHIVES;
  let prefetcher: ArchivePrefetcher | undefined;
  if (mode === "latest" || mode === "all") {
    prefetcher = new ArchivePrefetcher(store, { version: deps.catalogVersion, packs: () => deps.engine.all() }, logger, {
      mode,
      concurrency: config.ARCHIVE_CONCURRENCY,
      ...deps.prefetch,
    });
    prefetcher.start();
  }
  return {
    links: mode === "off" ? UPSTREAM_LINKS : servedLinks(config.PUBLIC_URL),
    store,
    fetchesFromUpstream: mode !== "off",
    status() {
      void index.refresh().catch(() => undefined);
      const p = prefetcher?.status();
      return p ? { mode, ...p } : { mode, stored: index.size, total: null, failed: null, lastErrors: [] };
    },
    async close() {
      await prefetcher?.close();
      if (!deps.blobs) await blobs.close();
    },
  };
}
