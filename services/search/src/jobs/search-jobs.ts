import type { JobHandlers } from "@app/jobs";
import type { Reindex } from "../catalog/reindex.ts";
import { createReindexHandler } from "./reindex-handler.ts";

/** The jobs the search service owns, over one running catalog; where they run is `@app/jobs`' `serveJobs`. */
export function searchJobs(search: { reindex: Reindex }): Pick<JobHandlers, "catalog.reindex"> {
  return { "catalog.reindex": createReindexHandler(search) };
}

/**
 * The in-process refresh's jobs: the reindex job, whose failed tries (counted within one
 * refresh, whose queue retries them) the catalog is told of, so /readyz and the log say when
 * the next try is; the catalog then logs the failure itself.
 */
export function refreshJobs(catalog: {
  reindex: Reindex;
  refreshFailed(err: unknown, failedTries: number, source: string): boolean;
}): Pick<JobHandlers, "catalog.reindex"> {
  const read = createReindexHandler({ reindex: (from, ro) => catalog.reindex(from, { ...ro, logFailure: false }) });
  let failedTries = 0;
  return {
    "catalog.reindex": async (data, ctx) => {
      try {
        const result = await read(data, ctx);
        failedTries = 0;
        return result;
      } catch (err) {
        if (!catalog.refreshFailed(err, ++failedTries, data.source)) failedTries = 0;
        throw err;
      }
    },
  };
}
