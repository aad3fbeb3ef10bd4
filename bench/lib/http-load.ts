import autocannon from "autocannon";
import { readFileSync } from "node:fs";

export interface LoadResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  total: number;
  errors: number;
  non2xx: number;
  /** The server's CPU time (user + system, from /proc) over the load, per request answered. */
  serverCpuUsPerRequest?: number;
}

/** The next request path, one call per request. */
export type PathSource = () => string;

/** Cycle through a fixed list: the repeated mix. */
export function cycle(paths: readonly string[]): PathSource {
  let i = 0;
  return () => paths[i++ % paths.length]!;
}

/**
 * Paths made before the load from an endless source of distinct ones: while it runs, a request
 * costs the client an array read, as `cycle` does for the other arm, and not the making of a
 * query string (which only one arm would pay). Past the `count` made ahead, the
 * source goes on live; `live()` says how many were.
 */
export function madeAhead(next: PathSource, count: number): PathSource & { live(): number } {
  const paths = Array.from({ length: count }, next);
  let i = 0;
  let live = 0;
  const source = () => (i < paths.length ? paths[i++]! : (live++, next()));
  return Object.assign(source, { live: () => live });
}

const CLOCK_TICKS_PER_SEC = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)

/** User + system CPU seconds a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
}

/** Drive `url` with autocannon, one path from `nextPath` per request; with `serverPid`, measure its CPU per request. */
export async function load(
  url: string,
  nextPath: PathSource,
  opts: { connections: number; durationSec: number; serverPid?: number; method?: "GET" | "HEAD"; headers?: Record<string, string> },
): Promise<LoadResult> {
  const cpuBefore = opts.serverPid !== undefined ? cpuSeconds(opts.serverPid) : 0;
  const result = await autocannon({
    url,
    connections: opts.connections,
    duration: opts.durationSec,
    requests: [
      {
        ...(opts.method ? { method: opts.method } : {}),
        ...(opts.headers ? { headers: opts.headers } : {}),
        setupRequest: (req) => {
          req.path = nextPath();
          return req;
        },
      },
    ],
  });
  const cpu = opts.serverPid !== undefined ? cpuSeconds(opts.serverPid) - cpuBefore : undefined;
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    total: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    ...(cpu !== undefined && result.requests.total > 0 ? { serverCpuUsPerRequest: Math.round((cpu * 1e6) / result.requests.total) } : {}),
  };
}

/** The middle value (the upper one of an even count). */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

export function medianResult(rs: LoadResult[]): LoadResult {
  return {
    requestsPerSec: median(rs.map((r) => r.requestsPerSec)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    maxMs: Math.max(...rs.map((r) => r.maxMs)),
    total: rs.reduce((a, r) => a + r.total, 0),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
    serverCpuUsPerRequest: median(rs.map((r) => r.serverCpuUsPerRequest ?? NaN)),
  };
}
