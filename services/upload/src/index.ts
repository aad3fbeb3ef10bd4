// What the processes that host upload use: the runtime, its router, its jobs, and what a gateway mounts or proxies.
export { createRouter } from "./app.ts";
export { createUploadRuntime, type UploadRuntime } from "./compose.ts";
export { uploadJobs } from "./jobs/upload-jobs.ts";
export { routePrefixes, unavailableBody } from "./route-prefixes.ts";
// The blob store lives in @app/blobs; the worker builds the mask jobs' store through here.
export { createBlobStore } from "@app/blobs";
// The key file's principals also own the registry's publishers (search's private packs); the gateway hands them over.
export { ReloadingApiKeys } from "./adapters/keys/reloading-api-keys.ts";
export { keyFilePath } from "./adapters/keys/api-keys.ts";
