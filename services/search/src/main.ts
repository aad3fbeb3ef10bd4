import { createLogger, loadConfig, serve } from "@app/platform";
import { createApp } from "./app.ts";
import { createSearchDeps } from "./compose.ts";

/** The search service on its own: PORT defaults to 8081 here (the gateway has 8080). */
const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? "8081" });
const logger = createLogger("search", config.LOG_LEVEL);
const deps = await createSearchDeps(config, logger);
await serve(createApp(deps), { port: config.PORT, host: config.HOST, logger, closables: [deps] });
