import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, scriptFile, services } from "./support.ts";

/**
 * No Docker engine runs here, so this rebuilds what each image holds the way its Dockerfile's
 * build stage does (`pnpm --filter <pkg> --prod deploy`, from the lockfile, offline from the
 * local store) and starts it the way its CMD does (`node --import tsx <start file>`), with no
 * workspace around it. It catches what only breaks in an image: an import of an undeclared
 * package or of a file outside the package, a missing runtime dependency, a start that needs
 * the repository root, or a process that does not stop cleanly on SIGTERM.
 */

const catalog = join(repoRoot, "..", "shared", "data", "registry-nodes.ndjson");
let work: string;
let repoCopy: string;
const started: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** GET until it answers `status` or the deadline passes; returns the last answer. */
async function poll(url: string, status: number, deadlineMs: number, child: ChildProcess): Promise<{ status: number; body: string }> {
  const end = Date.now() + deadlineMs;
  let last = { status: 0, body: "" };
  while (Date.now() < end && child.exitCode === null) {
    try {
      const res = await fetch(url);
      last = { status: res.status, body: await res.text() };
      if (res.status === status) return last;
    } catch (err) {
      last = { status: 0, body: String(err) };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return last;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once("exit", (code) => r(code)));
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "deploy-image-"));
  repoCopy = join(work, "repo");
  // The build context: the working tree's files (tracked and new, minus what git ignores).
  const files = spawnSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: repoRoot, encoding: "utf8" });
  if (files.status !== 0) throw new Error(`git ls-files failed: ${files.stderr}`);
  for (const f of files.stdout.split("\0").filter(Boolean)) {
    mkdirSync(dirname(join(repoCopy, f)), { recursive: true });
    try {
      cpSync(join(repoRoot, f), join(repoCopy, f));
    } catch (err) {
      // A file listed by git but deleted in the working tree is not in the context either.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
});

afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.each(services)("the $name image's contents", ({ name, pkg }) => {
  it("deploy to a self-contained folder, start from its start file, answer /healthz and stop cleanly on SIGTERM", async () => {
    const out = join(work, `image-${name}`);
    const deploy = spawnSync("pnpm", ["--filter", pkg, "--prod", "--offline", "deploy", out], {
      cwd: repoCopy,
      encoding: "utf8",
      env: { ...process.env, CI: "true" },
    });
    expect(deploy.status, `pnpm deploy ${pkg}: ${deploy.stdout}\n${deploy.stderr}`).toBe(0);
    // The Dockerfile links a global tsx of the lockfile's version here; dockerfiles.test.ts
    // checks that version, this uses the workspace's copy of it.
    symlinkSync(realpathSync(join(repoRoot, "node_modules", "tsx")), join(out, "node_modules", "tsx"));

    const port = await freePort();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: work,
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: join(work, `data-${name}`),
      LOG_LEVEL: "warn",
    };
    if (name === "worker") Object.assign(env, { REDIS_URL: "redis://127.0.0.1:6379", QUEUE_PREFIX: `deploy-test-${randomUUID()}` });
    if (name === "search") env.CATALOG_SOURCE = catalog;

    const child = spawn("node", ["--import", "tsx", scriptFile(name, "start")], { cwd: out, env, stdio: ["ignore", "pipe", "pipe"] });
    started.push(child);
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    try {
      const health = await poll(`http://127.0.0.1:${port}/healthz`, 200, 45_000, child);
      expect(health.status, `/healthz of ${name}; output:\n${output}`).toBe(200);
      if (name === "search") {
        // The real catalog indexed by the deployed code, then searchable.
        const ready = await poll(`http://127.0.0.1:${port}/readyz`, 200, 45_000, child);
        expect(ready.status, `/readyz of search; output:\n${output}`).toBe(200);
        const res = await fetch(`http://127.0.0.1:${port}/nodes/search?search=impact%20pack&limit=5`);
        expect(res.status).toBe(200);
        const page = (await res.json()) as { total: number; nodes: unknown[] };
        expect(page.total).toBeGreaterThan(0);
      }
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exitOf(child), `exit after SIGTERM; output:\n${output}`).toBe(0);
  }, 120_000);
});
