import { createLogger, loadConfig, serve } from "@app/platform";
import { createApp } from "./app.ts";
import { createUploadRuntime } from "./compose.ts";

/** The standalone upload service. */
const config = loadConfig();
const logger = createLogger("upload", config.LOG_LEVEL);
const deps = await createUploadRuntime(config, logger);
await serve(createApp(deps), {
  port: config.PORT,
  host: config.HOST,
  logger,
  closables: [deps],
});
