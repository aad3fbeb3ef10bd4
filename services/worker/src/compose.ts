import { JOB_NAMES, type JobName } from "@app/contracts";
import { checkHandlers, type JobHandlers } from "@app/jobs";
import type { Config, Logger } from "@app/platform";
import { createReindexHandler, createSearchRuntime } from "@app/search";
import { createBlobStore, createMaskDeriveHandler } from "@app/upload";

export interface WorkerHandlers {
  handlers: JobHandlers;
  /** Close what the handlers hold (search engine, blob store), after the queue has drained. */
  close(): Promise<void>;
}

/** Refuse to start unless every job name of the contracts union has its handler (and nothing else). */
export function assertAllHandlers(handlers: Partial<JobHandlers>): asserts handlers is JobHandlers {
  checkHandlers(handlers);
  const missing = JOB_NAMES.filter((name: JobName) => typeof handlers[name] !== "function");
  if (missing.length > 0) {
    throw new Error(`the worker has no handler for job ${missing.join(", ")}: every job name in @app/contracts needs exactly one`);
  }
}

/**
 * Every job handler, composed from the services that own them: the catalog reindex from
 * search (as a writer: it builds and swaps the index, it serves no queries) and the mask
 * derivatives from upload (over the same blob store the upload service writes).
 */
export async function createWorkerHandlers(config: Config, logger: Logger): Promise<WorkerHandlers> {
  const search = await createSearchRuntime(config, logger.child({ component: "search" }), { role: "writer" });
  // No sweep of temporaries here: the upload service owns them, and one may be mid-upload.
  const store = await createBlobStore(config);
  await store.init();
  const handlers = {
    "catalog.reindex": createReindexHandler(search),
    "mask.derive": createMaskDeriveHandler({ store, logger: logger.child({ component: "mask" }), concurrency: config.WORKER_CONCURRENCY }),
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
