export { createApp, type WorkerAppDeps } from "./app.ts";
export { assertAllHandlers, createWorkerHandlers, type WorkerHandlers } from "./compose.ts";
