import { webDistDir } from "@app/web";
import { loadConfig, createLogger, serve } from "@app/platform";
import { createGatewayApp } from "./app.ts";
import { composeGateway } from "./compose.ts";
import { openApiRouter } from "./openapi-route.ts";

const config = loadConfig();
const logger = createLogger("gateway", config.LOG_LEVEL);
const { services, closables } = await composeGateway(config, logger);
const app = createGatewayApp({ services, logger, extraRoutes: openApiRouter(), webRoot: webDistDir });
await serve(app, { port: config.PORT, host: config.HOST, logger, closables });
logger.info(
  { mode: Object.fromEntries(services.map((s) => [s.name, s.mount.kind])), queue: config.REDIS_URL ? "bullmq" : "in-process" },
  "gateway started",
);
