import type { JobQueue } from "@app/jobs";
import { catalogSourceName, type CatalogSourceConfig, type Config, type Logger } from "@app/platform";
import { MIRROR_DEFAULTS, type MirrorOptions } from "../adapters/registry/mirror-options.ts";

/** The id of the one refresh schedule, in-process or in Redis. */
export const CATALOG_REFRESH_SCHEDULE = "catalog-refresh";

/**
 * How a failed read is retried within one refresh: 6 tries, 5 s apart and doubling (about 2.5 min
 * in all), then the next tick. Pages are retried on their own inside each try.
 */
export const REFRESH_RETRY = { attempts: MIRROR_DEFAULTS.refreshAttempts, backoffMs: MIRROR_DEFAULTS.refreshBackoffMs } as const;

/** The in-process refresh's retries: REFRESH_RETRY unless the mirror options shorten them (tests). */
export const refreshRetry = (mirror: MirrorOptions | undefined): { attempts: number; backoffMs: number } => ({
  attempts: mirror?.refreshAttempts ?? REFRESH_RETRY.attempts,
  backoffMs: mirror?.refreshBackoffMs ?? REFRESH_RETRY.backoffMs,
});

const HOUR_MS = 3_600_000;

/** CATALOG_REFRESH, or its default: hourly for a registry URL, never for a file. 0 = never. */
export function catalogRefreshMs(source: CatalogSourceConfig, refresh: Config["CATALOG_REFRESH"]): number {
  if (source.kind === "none") return 0;
  return refresh ?? (source.kind === "registry" ? HOUR_MS : 0);
}

/**
 * At scale: upsert (or remove) the one BullMQ job scheduler that refreshes the catalog. Every
 * worker replica calls this at start; Redis keeps one scheduler, so one worker runs each refresh.
 */
export async function scheduleCatalogRefresh(
  queue: JobQueue,
  config: Pick<Config, "CATALOG_SOURCE" | "CATALOG_REFRESH">,
  logger: Logger,
): Promise<void> {
  const everyMs = catalogRefreshMs(config.CATALOG_SOURCE, config.CATALOG_REFRESH);
  const source = catalogSourceName(config.CATALOG_SOURCE);
  if (!source || everyMs === 0) {
    await queue.unschedule(CATALOG_REFRESH_SCHEDULE);
    return;
  }
  await queue.schedule(CATALOG_REFRESH_SCHEDULE, "catalog.reindex", { source }, { everyMs, ...REFRESH_RETRY });
  logger.info({ source, everyMs }, "catalog refresh scheduled");
}
