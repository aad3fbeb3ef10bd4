export { createApp, type WorkerAppDeps } from "./app.ts";
export { createWorkerHandlers, type WorkerHandlers } from "./compose.ts";
