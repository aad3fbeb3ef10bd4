import type { JobHandler } from "@app/jobs";
import type { SearchDeps } from "../compose.ts";

/** The `catalog.reindex` job: read the source, swap the new index in, report counts as it goes. */
export function createReindexHandler(deps: Pick<SearchDeps, "reindex">): JobHandler<"catalog.reindex"> {
  return async (data, ctx) => {
    let lastSent = 0;
    return deps.reindex(data.source, (p) => {
      // Progress is a Redis write under BullMQ: a few per second is plenty.
      const now = Date.now();
      if (p.phase === "reading" && now - lastSent < 250) return;
      lastSent = now;
      void ctx.progress({ ...p }).catch(() => undefined);
    });
  };
}

/** One id per source: a second `pnpm reindex` of the same source while one runs joins it. */
export function reindexJobId(source: string, at: Date = new Date()): string {
  return `catalog.reindex:${source}:${at.toISOString().slice(0, 16)}`;
}
