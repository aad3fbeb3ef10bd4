/**
 * Event-loop delay as the benches report it. prom-client (`eventLoopMonitoringPrecision`, 10 ms
 * by default) and the upload sink sample the loop with `monitorEventLoopDelay`, which records each
 * timer's whole interval, so an idle loop reads about 10 ms: the figures are what exceeds it.
 */
export const LOOP_RESOLUTION_MS = 10;

const round = (x: number) => Math.round(x * 100) / 100;

export const beyondResolution = (ms: number): number => round(Math.max(0, ms - LOOP_RESOLUTION_MS));

/** A process's own loop delay since its last scrape (prom-client's histogram on `/metrics`, reset by each scrape). */
export async function scrapeEventLoopDelay(base: string): Promise<{ p99Ms: number; maxMs: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const ms = (name: string) => beyondResolution(Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN) * 1000);
  return { p99Ms: ms("nodejs_eventloop_lag_p99_seconds"), maxMs: ms("nodejs_eventloop_lag_max_seconds") };
}
