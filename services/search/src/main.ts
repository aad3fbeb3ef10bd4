import { createLogger, loadConfig, serve } from "@app/platform";
import { createSearchApp } from "./app.ts";
import { createSearchService } from "./service.ts";

/** The search service on its own, on SEARCH_PORT (the gateway has PORT). */
const config = loadConfig();
const logger = createLogger("search", config.LOG_LEVEL);
const search = await createSearchService(config, logger);
await serve(createSearchApp(search, logger), { port: config.SEARCH_PORT, host: config.HOST, logger, closables: [search] });
