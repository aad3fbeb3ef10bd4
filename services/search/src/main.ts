import { createLogger, loadConfig, serve } from "@app/platform";
import { createApp } from "./app.ts";
import { createSearchRuntime } from "./compose.ts";
import { catalogVersionOf, createArchiveService } from "./adapters/archives/archive-service.ts";
import { withBundleImported } from "./adapters/bundle/bundle-source.ts";

/** The search service on its own: PORT defaults to 8081 here (the gateway has 8080). */
const logger = createLogger("search", loadConfig(process.env).LOG_LEVEL);
// A bundle (CATALOG_SOURCE=<bundle.tar>) is imported first; the service then reads its catalog.
const config = await withBundleImported(loadConfig({ ...process.env, PORT: process.env.PORT ?? "8081" }), logger);
const search = await createSearchRuntime(config, logger);
const archives = await createArchiveService(config, logger.child({ component: "archives" }), { engine: search.engine, catalogVersion: () => catalogVersionOf(search.catalogStatus()) });
await serve(createApp({ ...search, archives }), { port: config.PORT, host: config.HOST, logger, closables: [archives, search] });
