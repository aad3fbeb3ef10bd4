import type { GatewayService } from "./service-mount.ts";

/** Ready only when every service is: embedded ones say so directly, proxied ones answer their /readyz. */
export async function readiness(services: GatewayService[]): Promise<Record<string, boolean>> {
  const entries = await Promise.all(
    services.map(async (s): Promise<[string, boolean]> => {
      if (s.mount.kind === "embedded") return [s.name, await Promise.resolve(s.mount.isReady()).catch(() => false)];
      try {
        const res = await fetch(new URL("/readyz", s.mount.url), { signal: AbortSignal.timeout(2_000) });
        return [s.name, res.ok];
      } catch {
        return [s.name, false];
      }
    }),
  );
  return Object.fromEntries(entries);
}
