import { createJobQueue, serveJobs } from "@app/jobs";
import { createLogger, loadConfig, serve } from "@app/platform";
import { scheduleCatalogRefresh } from "@app/search";
import { createApp } from "./app.ts";
import { createWorkerHandlers } from "./compose.ts";

/** The job worker: every handler, on BullMQ; its probes and metrics on WORKER_PORT. */
const config = loadConfig();
const logger = createLogger("worker", config.LOG_LEVEL);

if (!config.REDIS_URL) {
  logger.fatal(
    "REDIS_URL is not set: the worker takes its jobs from Redis (BullMQ). Without Redis, jobs run inside the gateway, search and upload processes and no worker is needed.",
  );
  process.exit(1);
}

const { handlers, close } = await createWorkerHandlers(config, logger);
const queue = createJobQueue(config, { logger });
await serveJobs(queue, handlers, { runner: "worker", concurrency: config.WORKER_CONCURRENCY });
// Every replica upserts the same scheduler; Redis keeps one, so each refresh runs once. A
// refused or failing refresh is logged by the handler and must not stop the worker from starting.
await scheduleCatalogRefresh(queue, config, logger).catch((err: unknown) =>
  logger.error({ err }, "could not schedule the catalog refresh"),
);
logger.info({ jobs: Object.keys(handlers), concurrency: config.WORKER_CONCURRENCY, prefix: config.QUEUE_PREFIX }, "worker taking jobs");

// SIGTERM: stop the probes' server, drain the queue (active jobs finish and store their results), then close the handlers' clients.
await serve(createApp({ queue, logger }), { port: config.WORKER_PORT, host: config.HOST, logger, closables: [queue, { close }] });
