import { createLogger, loadConfig, serve } from "@app/platform";
import { createApp } from "./app.ts";
import { createSearchDeps } from "./compose.ts";
import { catalogVersionOf, createArchiveService } from "./adapters/archives/archive-service.ts";

/** The search service on its own: PORT defaults to 8081 here (the gateway has 8080). */
const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? "8081" });
const logger = createLogger("search", config.LOG_LEVEL);
const deps = await createSearchDeps(config, logger);
const archives = await createArchiveService(config, logger.child({ component: "archives" }), { engine: deps.engine, catalogVersion: () => catalogVersionOf(deps.catalogStatus()) });
await serve(createApp({ ...deps, archives }), { port: config.PORT, host: config.HOST, logger, closables: [archives, deps] });
