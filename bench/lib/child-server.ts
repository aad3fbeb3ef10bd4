import { spawn, type ChildProcess } from "node:child_process";
import { repoRoot } from "./paths.ts";

export interface ChildServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Start a server script under tsx in its own process (so the load tool does not share its event loop) and wait until `readyPath` answers 200. */
export async function startChildServer(script: string, env: Record<string, string>, readyPath = "/readyz", timeoutMs = 120_000): Promise<ChildServer> {
  const port = env.PORT ?? String(20_000 + Math.floor(Math.random() * 20_000));
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: port, HOST: "127.0.0.1" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      const res = await fetch(url + readyPath);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${script} did not become ready within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }),
  };
}
