import { createLogger, loadConfig, serve } from "@app/platform";
import { createSearchApp } from "./app.ts";
import { createSearchService } from "./service.ts";

/** The search service on its own: PORT defaults to 8081 here (the gateway has 8080). */
const logger = createLogger("search", loadConfig(process.env).LOG_LEVEL);
const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? "8081" });
const search = await createSearchService(config, logger);
await serve(createSearchApp(search, logger), { port: config.PORT, host: config.HOST, logger, closables: [search] });
