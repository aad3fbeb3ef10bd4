/**
 * The paths an administrator sends to this instance when a name override makes it answer as
 * api.comfy.org beside the real one: every prefix the search service answers (services/search
 * `routes/paths.ts`), archives and ComfyUI-Manager's channel included. The README's "Using it
 * from ComfyUI tools" names the same; `services/web/test/clients-advice.test.ts` holds all three equal.
 */
export const REGISTRY_PATHS: readonly string[] = [
  "/nodes",
  "/versions",
  "/comfy-nodes",
  "/bulk/nodes",
  "/publishers",
  "/channel",
  "/archives",
  "/admin/nodes",
];
