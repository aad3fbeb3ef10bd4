import { createLogger, loadConfig, serve } from "@app/platform";
import { createApp } from "./app.ts";
import { createUploadRuntime } from "./compose.ts";

/** The standalone upload service, on UPLOAD_PORT (the gateway has PORT). */
const config = loadConfig();
const logger = createLogger("upload", config.LOG_LEVEL);
const deps = await createUploadRuntime(config, logger);
await serve(createApp(deps), {
  port: config.UPLOAD_PORT,
  host: config.HOST,
  logger,
  closables: [deps],
});
