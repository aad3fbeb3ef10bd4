/**
 * The path prefixes the upload service answers (matched at a segment boundary), each with and
 * without `/api` as a local ComfyUI server answers them: the spec's face (routes/upload/) and
 * ComfyUI's asset API (routes/assets/). The gateway routes these here, mounted or proxied.
 */
export const UPLOAD_PATHS: readonly string[] = ["/api/upload", "/upload", "/api/view", "/view", "/api/assets", "/assets", "/api/tags", "/tags"];
