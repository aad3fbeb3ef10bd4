import { errorBody } from "./domain/errors.ts";

/**
 * The path prefixes the upload service answers (matched at a segment boundary): the spec's
 * upload and view routes and ComfyUI's asset API, each with and without `/api`. A gateway
 * mounts or proxies exactly these.
 */
export const routePrefixes: readonly string[] = [
  "/api/upload",
  "/upload",
  "/api/view",
  "/view",
  "/api/assets",
  "/assets",
  "/api/tags",
  "/tags",
];

/** What a client of these routes gets when the service cannot be reached: 503 in the upload shape. */
export const unavailableBody = (message: string) => errorBody("unavailable", message);
