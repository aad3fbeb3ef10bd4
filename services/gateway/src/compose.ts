import { createJobQueue, serveJobs, type JobHandlers, type JobQueue } from "@app/jobs";
import type { Closable, Config, Logger } from "@app/platform";
import * as search from "@app/search";
import * as upload from "@app/upload";
import type { GatewayService } from "./service-mount.ts";

export interface ComposedGateway {
  services: GatewayService[];
  /** Closed in order on shutdown: services first (they stop producing jobs), then the queue. */
  closables: Closable[];
}

/**
 * The gateway's composition: each service is mounted in this process unless its URL is set,
 * in which case it is proxied. Jobs go through one queue (in-process, or BullMQ when REDIS_URL
 * is set); `serveJobs` decides whether this process runs the jobs of the services it mounts.
 */
export async function composeGateway(config: Config, logger: Logger): Promise<ComposedGateway> {
  const queue: JobQueue = createJobQueue(config, { logger: logger.child({ component: "jobs" }) });
  const services: GatewayService[] = [];
  const closables: Closable[] = [];
  const handlers: Partial<JobHandlers> = {};

  // Each service declares the paths it owns and its error shape (`routePrefixes`, `unavailableBody`).
  const searchRoutes: Omit<GatewayService, "mount"> = {
    name: "search",
    paths: search.routePrefixes,
    unavailableBody: search.unavailableBody,
    cors: search.applyRegistryCors,
  };
  if (config.SEARCH_URL) {
    services.push({ ...searchRoutes, mount: { kind: "proxy", url: config.SEARCH_URL } });
  } else {
    // Publishers are owned by the principals of the upload service's API keys (the same key file).
    const publisherKeys = await upload.ReloadingApiKeys.open({ file: upload.keyFilePath(config), plaintext: config.API_KEYS, logger });
    closables.push({ close: async () => publisherKeys.close() });
    const service = await search.createSearchService(config, logger.child({ service: "search" }), { publisherKeys });
    services.push({
      ...searchRoutes,
      mount: { kind: "embedded", ...service.routes(), isReady: () => service.isReady(), readyDetails: () => service.readyDetails() },
    });
    Object.assign(handlers, service.jobs);
    closables.push(service);
  }

  const uploadRoutes: Omit<GatewayService, "mount"> = {
    name: "upload",
    paths: upload.routePrefixes,
    unavailableBody: upload.unavailableBody,
  };
  if (config.UPLOAD_URL) {
    services.push({ ...uploadRoutes, mount: { kind: "proxy", url: config.UPLOAD_URL } });
  } else {
    const uploadLogger = logger.child({ service: "upload" });
    const runtime = await upload.createUploadRuntime(config, uploadLogger, { queue });
    services.push({ ...uploadRoutes, mount: { kind: "embedded", router: upload.createRouter(runtime), isReady: () => runtime.isReady() } });
    Object.assign(
      handlers,
      upload.uploadJobs({
        store: runtime.blobs,
        logger: uploadLogger,
        concurrency: config.WORKER_CONCURRENCY,
        threadpool: config.UV_THREADPOOL_SIZE,
      }),
    );
    closables.push(runtime);
  }

  await serveJobs(queue, handlers, { runner: "service", concurrency: config.WORKER_CONCURRENCY });
  closables.push(queue);
  return { services, closables };
}
