import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commandOnPath, compiledFile, configKeys, isRecord, readYaml, repoRoot, scriptFile, services, validateEnv } from "./support.ts";

/**
 * Compose's `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` and `$$`, resolved
 * against `env` (empty here: what a fresh checkout with no .env gets).
 */
function interpolate(value: unknown, env: Record<string, string> = {}): unknown {
  if (typeof value === "string") {
    return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (whole, name?: string, op?: string, arg?: string) => {
      if (whole === "$$") return "$";
      const v = env[name!];
      const unset = v === undefined || (op?.startsWith(":") === true && v === "");
      if (!unset) return v;
      if (op?.endsWith("?")) throw new Error(`compose: ${name} is required: ${arg}`);
      return op ? arg! : "";
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string; args?: Record<string, string> };
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: Record<string, { condition?: string }> | string[];
  restart?: string;
  profiles?: string[];
  volumes?: string[];
}

const raw = readYaml(join(repoRoot, "docker-compose.yml"));
const compose = interpolate(raw) as { services: Record<string, ComposeService>; volumes?: Record<string, unknown>; name?: unknown };
const all = compose.services;
const svc = (n: string): ComposeService => {
  const s = all[n];
  if (!s) throw new Error(`docker-compose.yml has no service ${n}`);
  return s;
};
const envOf = (n: string): Record<string, string> =>
  Object.fromEntries(Object.entries(svc(n).environment ?? {}).map(([k, v]) => [k, v === null ? "" : String(v)]));
const isOneShot = (s: ComposeService) => s.restart === "no";
const healthTest = (s: ComposeService) => (Array.isArray(s.healthcheck?.test) ? s.healthcheck.test.join(" ") : (s.healthcheck?.test ?? ""));
const dependsOn = (s: ComposeService): Record<string, { condition?: string }> =>
  Array.isArray(s.depends_on) ? Object.fromEntries(s.depends_on.map((d) => [d, {}])) : (s.depends_on ?? {});

describe("docker-compose.yml", () => {
  it("has no top-level name: key (docker-compose 1.29 rejects it)", () => {
    expect(isRecord(raw) && "name" in raw).toBe(false);
  });

  it("runs the four services, Redis, MinIO with its bucket one-shot, and Meilisearch", () => {
    for (const n of ["gateway", "search", "upload", "worker", "redis", "postgres", "minio", "minio-init", "meilisearch"])
      expect(Object.keys(all)).toContain(n);
  });

  it("gives every service a health check, unless it is a one-shot that others wait for or runs on demand", () => {
    for (const [n, s] of Object.entries(all)) {
      if (isOneShot(s)) {
        const awaited = Object.values(all).some((o) => dependsOn(o)[n]?.condition === "service_completed_successfully");
        expect(awaited || (s.profiles?.length ?? 0) > 0, `${n} is a one-shot nobody waits for`).toBe(true);
      } else {
        expect(s.healthcheck?.disable, n).not.toBe(true);
        expect(healthTest(s), `${n} has no healthcheck`).not.toBe("");
      }
    }
  });

  it("orders start-up on health: every dependency exists and is waited for by the right condition", () => {
    for (const [n, s] of Object.entries(all)) {
      for (const [dep, { condition }] of Object.entries(dependsOn(s))) {
        const target = all[dep];
        expect(target, `${n} depends on missing ${dep}`).toBeDefined();
        if (isOneShot(target!)) expect(condition, `${n} → ${dep}`).toBe("service_completed_successfully");
        else {
          expect(condition, `${n} → ${dep}`).toBe("service_healthy");
          expect(healthTest(target!), `${n} waits for ${dep} to be healthy but it has no healthcheck`).not.toBe("");
        }
      }
    }
  });

  it("declares every named volume it mounts, and mounts every one it declares", () => {
    const declared = Object.keys(compose.volumes ?? {});
    const used = new Set<string>();
    for (const [n, s] of Object.entries(all)) {
      for (const v of s.volumes ?? []) {
        const source = v.split(":")[0]!;
        if (/^[./~]/.test(source)) continue; // a bind mount
        expect(declared, `${n} mounts undeclared volume ${source}`).toContain(source);
        used.add(source);
      }
    }
    expect([...used].sort()).toEqual([...declared].sort());
    for (const engine of ["redis", "postgres", "minio", "meilisearch"]) expect(svc(engine).volumes?.length, engine).toBeGreaterThan(0);
  });

  it("builds each service from the one Dockerfile with its SERVICE, on its own port, and checks its readiness", () => {
    for (const s of services) {
      const c = svc(s.name);
      expect(c.build?.context).toBe(".");
      expect(c.build?.dockerfile ?? "Dockerfile").toBe("Dockerfile");
      expect(c.build?.args).toEqual({ SERVICE: s.name });
      expect(c.image).toMatch(new RegExp(`^comfy-registry-assets/${s.name}:`));
      expect(envOf(s.name).PORT).toBe(String(s.port));
      expect(healthTest(c)).toContain("/readyz");
    }
  });

  it("wires the gateway to search and upload, and nothing else", () => {
    const env = envOf("gateway");
    expect(env.SEARCH_URL).toBe(`http://search:${envOf("search").PORT}`);
    expect(env.UPLOAD_URL).toBe(`http://upload:${envOf("upload").PORT}`);
    for (const k of Object.keys(env)) expect(k, "the gateway needs no engine").not.toMatch(/^(REDIS|MEILI|S3)_/);
    expect(Object.keys(dependsOn(svc("gateway"))).sort()).toEqual(["search", "upload"]);
  });

  it("wires each service to the real engines it uses", () => {
    const uses = {
      search: ["MEILI_URL", "MEILI_API_KEY"],
      upload: ["REDIS_URL", "S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY", "S3_BUCKET", "DATABASE_URL"],
      worker: ["REDIS_URL", "MEILI_URL", "MEILI_API_KEY", "S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY", "S3_BUCKET"],
    };
    for (const [n, keys] of Object.entries(uses)) {
      const env = envOf(n);
      for (const k of keys) expect(env[k], `${n} ${k}`).toBeTruthy();
    }
    const engineOf = { REDIS_URL: "redis", MEILI_URL: "meilisearch", S3_ENDPOINT: "minio", DATABASE_URL: "postgres" } as const;
    for (const n of ["search", "upload", "worker"]) {
      for (const [key, engine] of Object.entries(engineOf)) {
        const v = envOf(n)[key];
        if (!v) continue;
        expect(new URL(v).hostname, `${n} ${key}`).toBe(engine);
        // MinIO is reached through the bucket one-shot, which itself waits for MinIO.
        const waitsFor = engine === "minio" ? "minio-init" : engine;
        expect(Object.keys(dependsOn(svc(n))), `${n} uses ${engine}`).toContain(waitsFor);
      }
    }
  });

  it("uses one set of credentials, bucket and queue prefix on both sides", () => {
    const minio = envOf("minio");
    const meili = envOf("meilisearch");
    for (const n of ["upload", "worker"]) {
      expect(envOf(n).S3_ACCESS_KEY, n).toBe(minio.MINIO_ROOT_USER);
      expect(envOf(n).S3_SECRET_KEY, n).toBe(minio.MINIO_ROOT_PASSWORD);
      expect(envOf(n).S3_BUCKET, n).toBe(envOf("minio-init").S3_BUCKET);
    }
    for (const n of ["search", "worker"]) expect(envOf(n).MEILI_API_KEY, n).toBe(meili.MEILI_MASTER_KEY);
    const postgres = envOf("postgres");
    const db = new URL(envOf("upload").DATABASE_URL!);
    expect([decodeURIComponent(db.username), decodeURIComponent(db.password), db.pathname.slice(1)]).toEqual([
      postgres.POSTGRES_USER,
      postgres.POSTGRES_PASSWORD,
      postgres.POSTGRES_DB,
    ]);
    // Meilisearch refuses master keys under 16 bytes in production mode.
    expect(meili.MEILI_MASTER_KEY!.length).toBeGreaterThanOrEqual(16);
    expect(minio.MINIO_ROOT_PASSWORD!.length).toBeGreaterThanOrEqual(8);
    const prefixes = ["upload", "worker", "reindex"].map((n) => envOf(n).QUEUE_PREFIX);
    expect(new Set(prefixes).size, `QUEUE_PREFIX ${prefixes.join(", ")}`).toBe(1);
    expect(prefixes[0]).toBeTruthy();
  });

  it("gives each service only variables config.ts knows, with values it accepts", () => {
    for (const n of [...services.map((s) => s.name), "reindex"]) {
      const env = envOf(n);
      for (const k of Object.keys(env)) expect(configKeys.has(k), `${n}: ${k} is not a variable of config.ts`).toBe(true);
      expect(() => validateEnv(env), n).not.toThrow();
    }
  });

  it("runs the reindex one-shot from the search image with the search package's reindex script", () => {
    const r = svc("reindex");
    expect(r.image).toBe(svc("search").image);
    const cmd = r.command as string[];
    expect(cmd.slice(0, 2)).toEqual(["node", compiledFile(scriptFile("search", "reindex"))]);
    const source = cmd[cmd.indexOf("--source") + 1]!;
    expect(source).toBeTruthy();
    expect(envOf("reindex").REDIS_URL).toBe(envOf("worker").REDIS_URL);
    // The worker reads the source: its default file must sit under a folder the worker mounts.
    if (source.startsWith("/")) {
      const mounts = (svc("worker").volumes ?? []).map((v) => v.split(":")[1]!);
      expect(
        mounts.some((m) => source.startsWith(`${m}/`)),
        `worker mounts ${mounts.join(", ")}`,
      ).toBe(true);
    }
  });

  it("is accepted by `docker-compose config` (with and without the reindex profile)", (ctx) => {
    if (!commandOnPath("docker-compose")) {
      console.log(
        "[deploy] docker-compose not on PATH (apt-get install -y --no-install-recommends docker-compose): skipping `docker-compose config`",
      );
      ctx.skip();
      return;
    }
    for (const extra of [[], ["--profile", "reindex"]]) {
      const r = spawnSync("docker-compose", ["-f", "docker-compose.yml", ...extra, "config", "-q"], { cwd: repoRoot, encoding: "utf8" });
      expect(r.status, `docker-compose ${extra.join(" ")} config: ${r.stderr}`).toBe(0);
    }
  });
});
