import { assertAllHandlers, type JobHandlers } from "@app/jobs";
import type { Config, Logger } from "@app/platform";
import { createSearchService } from "@app/search";
import { createBlobStore, uploadJobs } from "@app/upload";

export interface WorkerHandlers {
  handlers: JobHandlers;
  /** Close what the handlers hold (search engine, blob store), after the queue has drained. */
  close(): Promise<void>;
}

/**
 * Every job handler, composed from the services that own them: the catalog reindex from
 * search (as a writer: it builds and swaps the index, it serves no queries) and the mask
 * derivatives from upload (over the same blob store the upload service writes).
 */
export async function createWorkerHandlers(config: Config, logger: Logger): Promise<WorkerHandlers> {
  const search = await createSearchService(config, logger.child({ component: "search" }), { role: "writer" });
  // No sweep of temporaries here: the upload service owns them, and one may be mid-upload.
  const store = await createBlobStore(config);
  await store.init();
  const handlers = {
    ...search.jobs,
    ...uploadJobs({
      store,
      logger: logger.child({ component: "mask" }),
      concurrency: config.WORKER_CONCURRENCY,
      threadpool: config.UV_THREADPOOL_SIZE,
    }),
  } satisfies JobHandlers;
  assertAllHandlers(handlers);
  return {
    handlers,
    async close() {
      await search.close();
      await store.close();
    },
  };
}
