import { trickleRequest, type TrickleAnswer } from "./raw-http.ts";

/** Every asset API route that reads a JSON body, with and without the `/api` prefix. */
export const JSON_BODY_ROUTES = [
  ["POST", "/api/assets/from-hash"],
  ["PUT", "/api/assets/:id"],
  ["POST", "/assets/:id/tags"],
  ["DELETE", "/api/assets/:id/tags"],
] as const;

/**
 * A slow (or hostile) client on each JSON body route at once: a small valid body sent one byte
 * every `everyMs`, on `id`. Each answer comes back once the server has closed its connection;
 * a connection still open after `timeoutMs` rejects.
 */
export function trickleJsonBodies(
  base: string,
  opts: { key: string; id: string; everyMs: number; timeoutMs: number },
): Promise<(TrickleAnswer & { route: string })[]> {
  const body = Buffer.from(JSON.stringify({ name: "slow", tags: ["a", "b", "c"], user_metadata: { note: "x".repeat(40) } }));
  return Promise.all(
    JSON_BODY_ROUTES.map(async ([method, route]) => {
      const path = route.replace(":id", opts.id);
      const a = await trickleRequest(base, {
        method,
        path,
        headers: { "X-API-Key": opts.key, "Content-Type": "application/json" },
        body,
        everyMs: opts.everyMs,
        timeoutMs: opts.timeoutMs,
      });
      return { ...a, route: `${method} ${path}` };
    }),
  );
}
