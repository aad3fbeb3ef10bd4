import { execFileSync, spawnSync } from "node:child_process";
import { Socket } from "node:net";
import { testEnv } from "../packages/testkit/src/env.ts";

/**
 * Tests talk to a real Redis on 127.0.0.1:6379. If none answers, start one (keeping nothing
 * on disk) when redis-server is installed; otherwise fail with the command that fixes it.
 */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.setTimeout(500);
    s.once("connect", () => {
      s.write("PING\r\n");
    });
    s.once("data", (d) => {
      s.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
    s.once("error", () => resolve(false));
    s.once("timeout", () => {
      s.destroy();
      resolve(false);
    });
    s.connect(port, "127.0.0.1");
  });
}

export default async function setup(): Promise<void> {
  if (testEnv.REDIS_TEST_URL) return;
  if (await answers(6379)) return;
  const which = spawnSync("which", ["redis-server"]);
  if (which.status !== 0) {
    throw new Error("no Redis answers on 127.0.0.1:6379 and redis-server is not installed: apt-get install -y redis-server");
  }
  execFileSync("redis-server", ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no"]);
  for (let i = 0; i < 50; i++) {
    if (await answers(6379)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("started redis-server but it does not answer on 127.0.0.1:6379");
}
