export * from "./config.ts";
export * from "./logger.ts";
export * from "./request-id.ts";
export * from "./metrics.ts";
export * from "./serve.ts";
export * from "./http-observer.ts";
export * from "./direct-routes.ts";
export * from "./service-app.ts";
