import type { GatewayService } from "./service-mount.ts";

export interface GatewayReadiness {
  /** Whether this gateway can take traffic: every service it mounts in process is ready. */
  ready: boolean;
  /** Each service's own readiness, proxied ones included (reported, never gating). */
  services: Record<string, boolean>;
}

/**
 * The gateway's readiness is its own state. A proxied service has its own pods, probes and
 * Service; letting its outage gate the gateway would take every gateway pod out of rotation and
 * the other face with it, while the proxy already answers 502/503 for just that service's routes.
 * So proxied services are asked and reported, and only the embedded ones decide.
 */
export async function readiness(services: GatewayService[]): Promise<GatewayReadiness> {
  const states = await Promise.all(
    services.map(async (s) => ({ name: s.name, gating: s.mount.kind === "embedded", ready: await serviceReady(s) })),
  );
  return {
    ready: states.every((s) => !s.gating || s.ready),
    services: Object.fromEntries(states.map((s) => [s.name, s.ready])),
  };
}

async function serviceReady(s: GatewayService): Promise<boolean> {
  if (s.mount.kind === "embedded") return Promise.resolve(s.mount.isReady()).catch(() => false);
  try {
    const res = await fetch(new URL("/readyz", s.mount.url), { signal: AbortSignal.timeout(2_000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
