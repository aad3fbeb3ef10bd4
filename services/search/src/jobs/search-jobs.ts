import type { JobHandlers } from "@app/jobs";
import type { Reindex } from "../catalog/reindex.ts";
import { createReindexHandler } from "./reindex-handler.ts";

/** The jobs the search service owns, over one running catalog; where they run is `@app/jobs`' `serveJobs`. */
export function searchJobs(search: { reindex: Reindex }): Pick<JobHandlers, "catalog.reindex"> {
  return { "catalog.reindex": createReindexHandler(search) };
}
