import { UnrecoverableJobError, type JobHandler } from "@app/jobs";
import { CatalogRefusedError } from "../catalog/catalog-status.ts";
import type { Reindex } from "../catalog/reindex.ts";

/** The `catalog.reindex` job: read the source, swap the new index in, report counts as it goes. */
export function createReindexHandler(deps: { reindex: Reindex }): JobHandler<"catalog.reindex"> {
  return async (data, ctx) => {
    let lastSent = 0;
    try {
      return await deps.reindex(data.source, {
        force: data.force,
        full: data.full,
        onProgress: (p) => {
          // Progress is a Redis write under BullMQ: a few per second is plenty.
          const now = Date.now();
          if (p.phase === "reading" && now - lastSent < 250) return;
          lastSent = now;
          void ctx.progress({ ...p }).catch(() => undefined);
        },
      });
    } catch (err) {
      // Reading again gives the same too-small catalog: fail now, not after every retry.
      if (err instanceof CatalogRefusedError) throw new UnrecoverableJobError(err.message);
      throw err;
    }
  };
}

/** One id per source: a second `pnpm reindex` of the same source while one runs joins it. */
export function reindexJobId(source: string, at: Date = new Date()): string {
  return `catalog.reindex:${source}:${at.toISOString().slice(0, 16)}`;
}
