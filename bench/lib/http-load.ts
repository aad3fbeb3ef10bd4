import autocannon from "autocannon";

export interface LoadResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  errors: number;
  non2xx: number;
}

/** Drive `url` with autocannon, cycling through `paths` (one per request). */
export async function load(
  url: string,
  paths: string[],
  opts: { connections: number; durationSec: number; method?: "GET" | "HEAD"; headers?: Record<string, string> },
): Promise<LoadResult> {
  let i = 0;
  const result = await autocannon({
    url,
    connections: opts.connections,
    duration: opts.durationSec,
    ...(opts.method && { method: opts.method }),
    ...(opts.headers && { headers: opts.headers }),
    requests: [
      {
        setupRequest: (req) => {
          req.path = paths[i++ % paths.length]!;
          return req;
        },
      },
    ],
  });
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/** Medians of the rates and latencies over rounds; totals summed. */
export function medianResult(rs: LoadResult[]): LoadResult {
  return {
    requestsPerSec: median(rs.map((r) => r.requestsPerSec)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    total: rs.reduce((a, r) => a + r.total, 0),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
  };
}
