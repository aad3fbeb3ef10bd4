import { createJobQueue, type JobHandlers, type JobQueue } from "@app/jobs";
import type { Closable, Config, Logger } from "@app/platform";
import { createReindexHandler, createSearchRuntime, createSearchRoutes, SEARCH_PATHS } from "@app/search";
import { createRouter as createUploadRouter, createUploadDeps } from "@app/upload";
import type { GatewayService } from "./service-mount.ts";

export interface ComposedGateway {
  services: GatewayService[];
  /** Closed in order on shutdown: services first (they stop producing jobs), then the queue. */
  closables: Closable[];
}

export const UPLOAD_PATHS = ["/api/upload", "/upload", "/api/view", "/view", "/api/assets", "/assets", "/api/tags", "/tags"];

const searchUnavailable = (message: string) => ({ error: "service_unavailable", message });
const uploadUnavailable = (message: string) => ({ code: "unavailable", message, error: "unavailable" });

/**
 * The gateway's composition: each service is mounted in this process unless its URL is set,
 * in which case it is proxied. Jobs go through one queue (in-process, or BullMQ when REDIS_URL
 * is set); without Redis this process also runs the handlers of the services it mounts.
 */
export async function composeGateway(config: Config, logger: Logger): Promise<ComposedGateway> {
  const queue: JobQueue = createJobQueue(config, { logger: logger.child({ component: "jobs" }) });
  const services: GatewayService[] = [];
  const closables: Closable[] = [];
  const handlers: Partial<JobHandlers> = {};

  if (config.SEARCH_URL) {
    services.push({ name: "search", paths: [...SEARCH_PATHS], mount: { kind: "proxy", url: config.SEARCH_URL }, unavailableBody: searchUnavailable });
  } else {
    const search = await createSearchRuntime(config, logger.child({ service: "search" }));
    services.push({ name: "search", paths: [...SEARCH_PATHS], mount: { kind: "embedded", ...createSearchRoutes(search), isReady: () => search.isReady(), readyDetails: () => ({ catalog: search.catalogStatus() }) }, unavailableBody: searchUnavailable });
    handlers["catalog.reindex"] = createReindexHandler(search);
    closables.push(search);
  }

  if (config.UPLOAD_URL) {
    services.push({ name: "upload", paths: UPLOAD_PATHS, mount: { kind: "proxy", url: config.UPLOAD_URL }, unavailableBody: uploadUnavailable });
  } else {
    const upload = await createUploadDeps(config, logger.child({ service: "upload" }), { queue });
    services.push({ name: "upload", paths: UPLOAD_PATHS, mount: { kind: "embedded", router: createUploadRouter(upload), isReady: () => upload.isReady() }, unavailableBody: uploadUnavailable });
    handlers["mask.derive"] = upload.maskHandler;
    closables.push(upload);
  }

  // With Redis the worker service runs every handler; without it, jobs run here.
  if (queue.kind === "in-process") await queue.work(handlers, { concurrency: config.WORKER_CONCURRENCY });
  closables.push(queue);
  return { services, closables };
}
