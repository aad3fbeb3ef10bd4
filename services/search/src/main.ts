import { createLogger, loadConfig, serve } from "@app/platform";
import { createApp } from "./app.ts";
import { createSearchRuntime } from "./compose.ts";
import { catalogVersionOf, createArchiveService } from "./adapters/archives/archive-service.ts";

/** The search service on its own: PORT defaults to 8081 here (the gateway has 8080). */
const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? "8081" });
const logger = createLogger("search", config.LOG_LEVEL);
const search = await createSearchRuntime(config, logger);
const archives = await createArchiveService(config, logger.child({ component: "archives" }), { engine: search.engine, catalogVersion: () => catalogVersionOf(search.catalogStatus()) });
await serve(createApp({ ...search, archives }), { port: config.PORT, host: config.HOST, logger, closables: [archives, search] });
