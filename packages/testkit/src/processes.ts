import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export const SCRIPTS = {
  gateway: "services/gateway/src/main.ts",
  upload: "services/upload/src/main.ts",
  search: "services/search/src/main.ts",
  worker: "services/worker/src/main.ts",
  reindex: "services/search/src/cli/reindex.ts",
  apikey: "services/upload/src/cli/apikey.ts",
} as const;

export function tempDir(label: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `rel-${label}-`));
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Poll `cond` until it holds; throws naming `what` after `tries` polls (a generous bound, never a timing assertion). */
export async function waitUntil(cond: () => boolean | Promise<boolean>, what: string, { tries = 600, everyMs = 50 } = {}): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await sleep(everyMs);
  }
  throw new Error(`gave up waiting for ${what}`);
}

export interface Service {
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  /** Every line the process wrote to stdout and stderr so far. */
  output: string[];
  /** Resident set size from /proc/<pid>/status, in KiB. */
  rssKiB(): number;
  kill(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/**
 * Run one of the stack's entry points as its own process (`node --import tsx <script>`, as
 * `pnpm start` does) on a loopback port, and wait until `readyPath` answers 200. CATALOG_SOURCE
 * is `none` unless the test gives one (no test mirrors the public registry); `""` leaves the default.
 * `root`: another checkout of the repository to run it from (a bench comparing with an earlier version).
 */
export async function startService(
  script: string,
  env: Record<string, string>,
  opts: { readyPath?: string; timeoutMs?: number; port?: number; root?: string } = {},
): Promise<Service> {
  // freePort() only says a port was free a moment ago; a client socket of a test running beside
  // this one may take it before the child listens. A port we chose is chosen again; one the test
  // asked for is its to keep.
  for (let tries = 1; ; tries++) {
    try {
      return await startServiceOnce(script, env, { ...opts, port: opts.port ?? (await freePort()) });
    } catch (err) {
      if (opts.port !== undefined || tries >= 3 || !(err instanceof PortTakenError)) throw err;
    }
  }
}

class PortTakenError extends Error {}

async function startServiceOnce(
  script: string,
  env: Record<string, string>,
  opts: { readyPath?: string; timeoutMs?: number; port: number; root?: string },
): Promise<Service> {
  const port = opts.port;
  const root = opts.root ?? repoRoot;
  const child = spawn(process.execPath, [...startFlags(script, root), "--import", "tsx", script], {
    cwd: root,
    env: { ...cleanEnv(), LOG_LEVEL: "warn", CATALOG_SOURCE: "none", ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let rest = "";
    stream.setEncoding("utf8");
    stream.on("data", (s: string) => {
      const lines = (rest + s).split("\n");
      rest = lines.pop()!;
      output.push(...lines);
    });
    stream.on("end", () => {
      if (rest) output.push(rest);
    });
  }
  const url = `http://127.0.0.1:${port}`;
  const exited = once(child, "exit");
  const closed = once(child, "close"); // after its output has been read whole
  const svc: Service = {
    url,
    port,
    pid: child.pid!,
    child,
    output,
    rssKiB: () => rssKiB(child.pid!),
    async kill(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill("SIGKILL"), 8_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) {
      await closed;
      const why = `${script} exited with ${child.exitCode}:\n${output.slice(-20).join("\n")}`;
      throw output.some((l) => l.includes("EADDRINUSE")) ? new PortTakenError(why) : new Error(why);
    }
    try {
      const res = await fetch(url + (opts.readyPath ?? "/readyz"), { signal: AbortSignal.timeout(2_000) });
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await svc.kill("SIGKILL");
      throw new Error(`${script} was not ready within ${opts.timeoutMs ?? 60_000} ms:\n${output.slice(-20).join("\n")}`);
    }
    await sleep(100);
  }
  return svc;
}

/**
 * The node flags (V8's among them) a service's start script gives its main file, e.g.
 * `node --heap-growing-percent=200 --import tsx src/main.ts`, so a test runs it as `pnpm start` does.
 */
function startFlags(script: string, root: string): string[] {
  const m = /^(services\/[^/]+)\/src\/main\.ts$/.exec(script.startsWith(root) ? script.slice(root.length + 1) : script);
  if (!m) return [];
  const start =
    (JSON.parse(readFileSync(join(root, m[1]!, "package.json"), "utf8")) as { scripts?: { start?: string } }).scripts?.start ?? "";
  return /^node\s+((?:--\S+\s+)*)--import\s+tsx\s/.exec(start)?.[1]!.split(/\s+/).filter(Boolean) ?? [];
}

/** The parent's environment without the stack's own variables, so a developer's shell cannot change what a test runs. */
function cleanEnv(): Record<string, string> {
  const drop =
    /^(PORT|SEARCH_PORT|UPLOAD_PORT|WORKER_PORT|HOST|DATA_DIR|SEARCH_URL|UPLOAD_URL|CATALOG_SOURCE|CATALOG_REFRESH|API_KEYS|API_KEYS_FILE|REDIS_URL|QUEUE_PREFIX|MEILI_.*|S3_.*|UPLOAD_MAX_BYTES|TEMP_MAX_AGE_MS|BODY_TIMEOUT_MS|MASK_JOB_TIMEOUT_MS|RATE_LIMIT_.*|LOG_LEVEL)$/;
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !drop.test(e[0])));
}

export function rssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

/** Run a script to its end (the reindex CLI), collecting its output. */
export async function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: repoRoot,
    env: { ...cleanEnv(), LOG_LEVEL: "warn", CATALOG_SOURCE: "none", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += String(d)));
  child.stderr.on("data", (d) => (stderr += String(d)));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

/**
 * A redis-server of our own on another port (the shared one on 6379 is never stopped), with an
 * append-only file as a production Redis would have, so a stop and start keeps its jobs.
 */
export class OwnRedis {
  private child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(
      "redis-server",
      [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--dir",
        this.dir,
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
      ],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 100; i++) {
      if (
        spawnSync("redis-cli", ["-p", String(this.port), "ping"])
          .stdout.toString()
          .trim() === "PONG"
      )
        return;
      await sleep(50);
    }
    throw new Error(`redis-server on port ${this.port} did not answer`);
  }

  async stop(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = once(c, "exit");
    c.kill("SIGTERM");
    await exited;
  }
}
