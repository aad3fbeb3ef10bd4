import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3 } from "@app/testkit/s3rver";
import { freePort } from "@app/testkit/processes";
import { testCatalog } from "@app/testkit/catalog";
import { childEnv, testEnv } from "@app/testkit/env";
import { dockerContextFiles, imageCommand, repoRoot, services, type ServiceName } from "./support.ts";

/**
 * No Docker engine runs here, so this rebuilds what each image holds the way its Dockerfile's
 * build stage does (install from the lockfile, `pnpm --filter <pkg> build` to dist/, then
 * `pnpm --filter <pkg> --prod deploy` hoisted, from the local store) and starts it with its CMD
 * (`node [flags] dist/main.js`: compiled JavaScript, no tsx), with no workspace around it. It catches what only breaks in an image: an import of an undeclared
 * package or of a file outside the package, a missing runtime dependency, a start that needs
 * the repository root, a process that does not stop cleanly on SIGTERM, or services that do not
 * work together when wired by URL and Redis the way docker-compose.yml and deploy/base wire them.
 */

const catalog = testCatalog().path;
const pkgOf = Object.fromEntries(services.map((s) => [s.name, s.pkg])) as Record<ServiceName, string>;
let work: string;
let repoCopy: string;
const started: ChildProcess[] = [];
const queuePrefixes: string[] = [];

/** A queue prefix of its own for this run, removed from Redis afterwards. */
function queuePrefix(): string {
  const p = `deploy-test-${randomUUID()}`;
  queuePrefixes.push(p);
  return p;
}

async function dropQueueKeys(): Promise<void> {
  type Redis = {
    scan(cursor: string, match: "MATCH", pattern: string, count: "COUNT", n: number): Promise<[string, string[]]>;
    del(...keys: string[]): Promise<number>;
    quit(): Promise<unknown>;
  };
  // ioredis from the jobs package (the root has no dependency on it).
  const mod = createRequire(join(repoRoot, "packages/jobs/package.json"))("ioredis") as { default: new (url: string) => Redis };
  const redis = new mod.default("redis://127.0.0.1:6379");
  try {
    for (const prefix of queuePrefixes) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== "0");
    }
  } finally {
    await redis.quit();
  }
}

function pnpm(args: string[]): void {
  // Prefer the cache, but reach the registry for what it lacks: pnpm's supply-chain check wants
  // full metadata that an install with a fresh lockfile verification need not have cached.
  const r = spawnSync("pnpm", args, { cwd: repoCopy, encoding: "utf8", env: childEnv({ CI: "true" }) });
  if (r.status !== 0) throw new Error(`pnpm ${args.join(" ")} failed:\n${r.stdout}\n${r.stderr}`);
}

let installed = false;

/** The image's folder for a service, built once per run like the Dockerfile's build stage. */
function imageFolder(name: ServiceName): string {
  const out = join(work, `image-${name}`);
  if (existsSync(out)) return out;
  if (!installed) pnpm(["install", "--prefer-offline", "--frozen-lockfile", "--ignore-scripts"]);
  installed = true;
  pnpm(["--filter", pkgOf[name], "build"]);
  pnpm(["--filter", pkgOf[name], "--prod", "--prefer-offline", "--config.node-linker=hoisted", "deploy", out]);
  // The image's build stage compiles better-sqlite3 in the deployed folder (`npm rebuild`); a
  // compile takes minutes on these machines, so the workspace's own build of the same version is copied.
  const sqlite = join(out, "node_modules/better-sqlite3");
  // pnpm's side-effects cache may already have put the build in the deployed folder, as links to
  // the very files the workspace holds (copying them onto themselves fails).
  if (existsSync(sqlite) && !existsSync(join(sqlite, "build/Release/better_sqlite3.node"))) {
    const built = dirname(createRequire(join(repoRoot, "services/upload/package.json")).resolve("better-sqlite3/package.json"));
    cpSync(join(built, "build"), join(sqlite, "build"), { recursive: true });
  }
  return out;
}

interface Running {
  child: ChildProcess;
  url: string;
  output(): string;
}

/**
 * Starts a service from its image folder with the image's CMD and only the given env; with
 * `virtualMemoryKiB`, under that `ulimit -v` (bash sets it, then becomes the CMD).
 */
async function start(name: ServiceName, extraEnv: Record<string, string> = {}, opts: { virtualMemoryKiB?: number } = {}): Promise<Running> {
  const cwd = imageFolder(name);
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: testEnv.PATH,
    HOME: work,
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: join(work, `data-${name}-${port}`),
    LOG_LEVEL: "warn",
    // No test mirrors the public registry: a service is given a file, or nothing.
    CATALOG_SOURCE: "none",
    ...extraEnv,
  };
  const cmd = imageCommand(name);
  const [command, ...args] =
    opts.virtualMemoryKiB === undefined ? cmd : ["bash", "-c", `ulimit -v ${opts.virtualMemoryKiB} && exec "$@"`, "bash", ...cmd];
  const child = spawn(command!, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return { child, url: `http://127.0.0.1:${port}`, output: () => output };
}

/** GET until it answers `status`, the process dies, or the deadline passes; returns the last answer. */
async function poll(r: Running, path: string, status: number, deadlineMs = 45_000): Promise<{ status: number; body: string }> {
  const end = Date.now() + deadlineMs;
  let last = { status: 0, body: "" };
  while (Date.now() < end && r.child.exitCode === null) {
    try {
      const res = await fetch(`${r.url}${path}`);
      last = { status: res.status, body: await res.text() };
      if (res.status === status) return last;
    } catch (err) {
      last = { status: 0, body: String(err) };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}

/** SIGTERM, then the exit code (serve() drains and exits 0). */
function stop(r: Running): Promise<number | null> {
  const { child } = r;
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  return exited;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "deploy-image-"));
  repoCopy = join(work, "repo");
  // The build context, as .dockerignore trims it: a service that reaches for a test helper,
  // bench code or anything else the image does not get fails here too.
  for (const f of dockerContextFiles()) {
    mkdirSync(dirname(join(repoCopy, f)), { recursive: true });
    try {
      cpSync(join(repoRoot, f), join(repoCopy, f));
    } catch (err) {
      // A file listed by git but deleted in the working tree is not in the context either.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
});

afterAll(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
  await dropQueueKeys();
});

describe.each(services)("the $name image's contents", ({ name }) => {
  it("compile and deploy to a self-contained folder, start the compiled entry point, answer /healthz and stop cleanly on SIGTERM", async () => {
    expect(readdirSync(imageFolder(name))).toContain("dist");
    // The worker takes its jobs from Redis and refuses to start without it.
    const env: Record<string, string> = name === "worker" ? { REDIS_URL: "redis://127.0.0.1:6379", QUEUE_PREFIX: queuePrefix() } : {};
    const r = await start(name, env);
    try {
      const health = await poll(r, "/healthz", 200);
      expect(health.status, `/healthz of ${name}; output:\n${r.output()}`).toBe(200);
    } finally {
      expect(await stop(r), `exit after SIGTERM; output:\n${r.output()}`).toBe(0);
    }
  }, 120_000);
});

describe("the four images wired as docker-compose.yml wires them (URLs, jobs on Redis, blobs on S3)", () => {
  it("search through the gateway, upload an image and a mask through it, the worker makes the derivatives", async () => {
    // Same QUEUE_PREFIX on the producer and the worker, and the same bucket, as both
    // deploy/base and compose set them; upload and worker share nothing else (each has its own
    // DATA_DIR). s3rver stands in for MinIO; search runs its embedded engine, as Meilisearch
    // cannot run on this machine.
    const s3 = await startS3();
    const queue = { REDIS_URL: "redis://127.0.0.1:6379", QUEUE_PREFIX: queuePrefix() };
    const bucket = { S3_ENDPOINT: s3.endpoint, S3_ACCESS_KEY: s3.accessKey, S3_SECRET_KEY: s3.secretKey, S3_BUCKET: "comfy-assets" };
    const key = `stack-key-${randomUUID()}`;
    const search = await start("search", { CATALOG_SOURCE: catalog });
    const upload = await start("upload", { ...queue, ...bucket, API_KEYS: key });
    const worker = await start("worker", { ...queue, ...bucket });
    const all = [search, upload, worker];
    try {
      for (const r of all) expect((await poll(r, "/readyz", 200)).status, r.output()).toBe(200);
      const gateway = await start("gateway", { SEARCH_URL: search.url, UPLOAD_URL: upload.url });
      all.push(gateway);
      expect((await poll(gateway, "/readyz", 200)).status, gateway.output()).toBe(200);

      const found = await fetch(`${gateway.url}/nodes/search?search=impact%20pack&limit=5`);
      expect(found.status).toBe(200);
      expect(((await found.json()) as { total: number }).total).toBeGreaterThan(0);

      // sharp from the upload package (the root has no dependency on it).
      const sharp = createRequire(join(repoRoot, "services/upload/package.json"))("sharp") as (input: unknown) => {
        png(): { toBuffer(): Promise<Buffer> };
        metadata(): Promise<{ width?: number; height?: number }>;
      };
      const original = await sharp({ create: { width: 8, height: 4, channels: 3, background: { r: 200, g: 40, b: 90 } } })
        .png()
        .toBuffer();
      // White, no alpha: a luminance mask covering everything.
      const mask = await sharp({ create: { width: 8, height: 4, channels: 3, background: { r: 255, g: 255, b: 255 } } })
        .png()
        .toBuffer();

      const form = new FormData();
      form.append("image", new Blob([original], { type: "image/png" }), "orig.png");
      form.append("type", "input");
      const up = await fetch(`${gateway.url}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": key } });
      const upBody = (await up.json()) as { name: string };
      expect(up.status, `${JSON.stringify(upBody)}\nupload:\n${upload.output()}\ngateway:\n${gateway.output()}`).toBe(200);

      const maskForm = new FormData();
      maskForm.append("image", new Blob([mask], { type: "image/png" }), "clipspace-mask-1.png");
      maskForm.append("original_ref", JSON.stringify({ filename: upBody.name, subfolder: "", type: "input" }));
      maskForm.append("type", "input");
      maskForm.append("subfolder", "clipspace");
      const masked = await fetch(`${gateway.url}/api/upload/mask`, { method: "POST", body: maskForm, headers: { "X-API-Key": key } });
      const maskBody = (await masked.json()) as { name: string; metadata?: { related_files?: { painted?: string } } };
      expect(masked.status, `${JSON.stringify(maskBody)}\nworker:\n${worker.output()}`).toBe(200);
      expect(maskBody.metadata?.related_files?.painted).toBe(maskBody.name);

      const view = await fetch(`${gateway.url}/api/view?filename=${encodeURIComponent(maskBody.name)}&type=input&subfolder=clipspace`, {
        headers: { "X-API-Key": key },
      });
      expect(view.status).toBe(200);
      const painted = await sharp(Buffer.from(await view.arrayBuffer())).metadata();
      expect([painted.width, painted.height]).toEqual([8, 4]);
    } finally {
      try {
        for (const r of all.reverse()) expect(await stop(r), `exit after SIGTERM; output:\n${r.output()}`).toBe(0);
      } finally {
        await s3.stop();
      }
    }
  }, 180_000);
});

describe("the upload image under ulimit -v 16000000 (about 15 GiB of address space, as a container or shared host may set)", () => {
  // Upload buffers once came from WebAssembly memories, each reserving about 10 GiB of address
  // space: the second one failed, and so did the upload.
  const LIMIT_KIB = 16_000_000;
  it("six uploads of several MiB, three at a time, all stored and read back", async () => {
    const key = `ulimit-key-${randomUUID()}`;
    const r = await start("upload", { API_KEYS: key }, { virtualMemoryKiB: LIMIT_KIB });
    try {
      expect((await poll(r, "/readyz", 200)).status, r.output()).toBe(200);
      // Noise PNGs of several MiB each (sharp from the upload package; the root has no dependency on it).
      const sharp = createRequire(join(repoRoot, "services/upload/package.json"))("sharp") as (input: unknown) => {
        png(o: object): { toBuffer(): Promise<Buffer> };
      };
      const images = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          sharp({
            create: { width: 1300 + i, height: 1000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } },
          })
            .png({ compressionLevel: 1 })
            .toBuffer(),
        ),
      );
      let next = 0;
      const names = new Array<string>(images.length);
      await Promise.all(
        Array.from({ length: 3 }, async () => {
          for (let i = next++; i < images.length; i = next++) {
            const form = new FormData();
            form.append("image", new Blob([new Uint8Array(images[i]!)], { type: "image/png" }), "big.png");
            const res = await fetch(`${r.url}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": key } });
            const body = (await res.json()) as { name: string };
            expect(res.status, `${JSON.stringify(body)}\n${r.output()}`).toBe(200);
            names[i] = body.name;
          }
        }),
      );
      for (const [i, image] of images.entries()) {
        expect(image.length).toBeGreaterThan(3 * 1024 * 1024);
        const back = await fetch(`${r.url}/api/view?filename=${names[i]}`, { headers: { "X-API-Key": key } });
        expect(Buffer.from(await back.arrayBuffer()).equals(image)).toBe(true);
      }
    } finally {
      expect(await stop(r), `exit after SIGTERM; output:\n${r.output()}`).toBe(0);
    }
  }, 120_000);
});
