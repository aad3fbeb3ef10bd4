import { z } from "zod";

/**
 * Every environment variable the stack reads, validated once at boot. Which implementation
 * backs each port follows from this: REDIS_URL → BullMQ, MEILI_URL → Meilisearch,
 * S3_ENDPOINT → S3/MinIO; otherwise the embedded defaults.
 */

const url = z.string().trim().url();

/** The public Comfy registry: the catalog mirrored when CATALOG_SOURCE is unset. */
export const PUBLIC_REGISTRY = "https://api.comfy.org";

/**
 * Where the catalog comes from, parsed once from CATALOG_SOURCE: a registry API to mirror, an
 * NDJSON or JSON array file, a mirror bundle (`pnpm mirror export`) to import, or none.
 */
export type CatalogSourceConfig =
  | { kind: "registry"; url: string }
  | { kind: "file"; path: string }
  | { kind: "bundle"; path: string }
  | { kind: "demo" }
  | { kind: "none" };

/**
 * Each kind with how its value is recognised, tried in order (the first that matches wins; `file`
 * takes anything). A new kind is one more line here and one more member of the union above.
 */
const CATALOG_SOURCE_KINDS: ReadonlyArray<(v: string) => CatalogSourceConfig | undefined> = [
  (v) => (v.toLowerCase() === "none" ? { kind: "none" } : undefined),
  (v) => (v.toLowerCase() === "demo" ? { kind: "demo" } : undefined),
  (v) => (/^https?:\/\//i.test(v) ? { kind: "registry", url: v } : undefined),
  (v) => (/\.tar$/i.test(v) ? { kind: "bundle", path: v } : undefined),
  (v) => ({ kind: "file", path: v }),
];

/** CATALOG_SOURCE's value (or a reindex job's `source`) as its kind. */
export function parseCatalogSource(value: string): CatalogSourceConfig {
  for (const parse of CATALOG_SOURCE_KINDS) {
    const source = parse(value);
    if (source) return source;
  }
  throw new Error("unreachable: the file kind takes any value");
}

/** The URL or path a source names, as logs, /readyz and a reindex job carry it; null for none. */
export function catalogSourceName(source: CatalogSourceConfig): string | null {
  switch (source.kind) {
    case "registry":
      return source.url;
    case "file":
    case "bundle":
      return source.path;
    case "demo":
      return "demo";
    case "none":
      return null;
  }
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function durationMs(v: string): number {
  const [, n, unit] = /^(\d+)(ms|s|m|h|d)$/.exec(v)!;
  return Number(n) * DURATION_UNITS_MS[unit!]!;
}

/** `off` → 0, `90s`/`30m`/`1h`/`1d`/`500ms` → milliseconds; unset → undefined (the default follows the source). */
const refreshInterval = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(off|\d+(ms|s|m|h|d))$/, "must be off or a duration such as 30s, 15m, 1h, 1d")
  .transform((v) => (v === "off" ? 0 : durationMs(v)))
  .optional();
/** A duration only (no `off`): `0s` is allowed. */
const duration = (def: string) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^\d+(ms|s|m|h|d)$/, "must be a duration such as 0s, 12h, 1d")
    .default(def)
    .transform(durationMs);
const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const port = z.coerce.number().int().min(0);

/**
 * The port each service listens on when neither its own variable nor PORT says: the gateway's is
 * the documented 8080; each service started on its own has its own, so that they can run side by side.
 */
const DEFAULT_PORTS = { gateway: 8080, search: 8081, upload: 8082, worker: 8083 } as const;
/** A per-minute limit: 0 = none. */
const perMinute = z.coerce.number().int().min(0).max(1_000_000_000).default(0);

export const ConfigSchema = z
  .object({
    NODE_ENV: z.string().default("development"),
    HOST: z.string().default("0.0.0.0"),
    /** The gateway's port, and any service's when its own variable below is unset. */
    PORT: port.optional(),
    /** A service started on its own listens here (else on PORT, else its default port). */
    SEARCH_PORT: port.optional(),
    UPLOAD_PORT: port.optional(),
    WORKER_PORT: port.optional(),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    DATA_DIR: z.string().default("./.data"),

    SEARCH_URL: url.optional(),
    UPLOAD_URL: url.optional(),

    /** A file, a bundle (`.tar`), or an http(s) registry API to mirror; unset mirrors the public registry; `none` starts empty. */
    CATALOG_SOURCE: z.string().trim().min(1).default(PUBLIC_REGISTRY).transform(parseCatalogSource),
    /** How often the catalog is read again (ms; 0 = never). Unset: 1h for a URL source, never for a file. */
    CATALOG_REFRESH: refreshInterval,
    /**
     * A registry refresh reads only the packs updated since the last one (`timestamp=`), except
     * when the last full pass (every pack, so deletions show) is older than this (ms; 0 = every refresh is full).
     */
    CATALOG_FULL_REFRESH: duration("1d"),

    /**
     * Node archives (each version's `downloadUrl`): `off` answers upstream's URL; `on-demand` serves
     * them from here, fetched from upstream on the first request and stored; `latest` also stores
     * every pack's install-path version while mirroring; `all` every version.
     */
    MIRROR_ARCHIVES: z.enum(["off", "on-demand", "latest", "all"]).default("on-demand"),
    /** The address clients reach this service at (`https://api.comfy.org` behind a name override); unset: taken from each request. */
    PUBLIC_URL: url.transform((v) => v.replace(/\/+$/, "")).optional(),
    /** An archive fetch from upstream that has not started answering (or has stalled) for this long is abandoned. */
    ARCHIVE_TIMEOUT_MS: int(15_000, 1),
    /** Archives prefetched at once (`latest`, `all`). */
    ARCHIVE_CONCURRENCY: int(4, 1),

    /** Private packs: `on` holds a published version Pending until an owner's key (or `pnpm publisher status`) sets its status. */
    PUBLISH_REVIEW: z.enum(["on", "off"]).default("off"),
    /** Private packs: run on each stored archive (its path is the last argument); a non-zero exit flags the version with the output. */
    PUBLISH_SCAN_COMMAND: z.string().trim().min(1).optional(),
    /** Private packs: how long a publish's signed upload URL stays valid (seconds). */
    PUBLISH_UPLOAD_TTL_SECONDS: int(15 * 60, 10),
    /** Private packs: an archive unpacking to more than this, or more than PUBLISH_MAX_RATIO times its size, or with more entries, is refused. */
    PUBLISH_MAX_UNPACKED_BYTES: int(512 * 1024 * 1024, 1),
    PUBLISH_MAX_RATIO: int(200, 1),
    PUBLISH_MAX_ENTRIES: int(20_000, 1),

    API_KEYS: z.string().optional(),
    API_KEYS_FILE: z.string().optional(),
    UPLOAD_MAX_BYTES: int(50 * 1024 * 1024, 1),
    /** POST /api/assets: model files are gigabytes (a full-precision FLUX.1-dev checkpoint is 23.8 GB); the body streams to disk, so this bounds disk, not memory. */
    ASSET_UPLOAD_MAX_BYTES: int(32 * 1024 ** 3, 1),
    /** Asset records written before owners existed are handed to this key label at start (none: no key sees them). */
    ASSET_LEGACY_OWNER: z.string().trim().min(1).optional(),
    /**
     * The asset API's `preview_url`s are signed with this (HMAC-SHA256) so that a browser's `<img>`
     * can fetch them without a key. Unset: a random secret kept in DATA_DIR/preview-url.secret, so
     * replicas sharing DATA_DIR agree; replicas that share no DATA_DIR must all be given the same one.
     */
    PREVIEW_URL_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
    /** How long a signed `preview_url` stays valid (seconds); an answer's URL is valid for at least this long. */
    PREVIEW_URL_TTL_SECONDS: int(24 * 60 * 60, 60),
    MASK_JOB_TIMEOUT_MS: int(30_000, 1),
    /** libuv's thread pool (libuv reads it itself); the mask jobs leave two of its threads free. Unset: libuv's default, 4. */
    UV_THREADPOOL_SIZE: z.coerce.number().int().min(1).optional(),
    BODY_TIMEOUT_MS: int(30_000, 1),
    /**
     * Per-key limits per minute for keys whose key-file line names none (0 = no limit): upload
     * requests, upload MiB, and requests on every other keyed route. Counted in Redis when REDIS_URL is set.
     */
    RATE_LIMIT_UPLOAD_RPM: perMinute,
    RATE_LIMIT_UPLOAD_MBPM: perMinute,
    RATE_LIMIT_ASSETS_RPM: perMinute,
    /**
     * The start-up sweep removes any upload temporary older than this (others' only when their
     * process is known gone), so replicas sharing a bucket or DATA_DIR keep each other's uploads.
     */
    TEMP_MAX_AGE_MS: int(60 * 60 * 1000, 60_000),
    /** A resumable (tus) upload, finished or not, is removed this long after its creation (`Upload-Expires`). */
    TUS_EXPIRY: duration("1d"),

    REDIS_URL: z
      .string()
      .trim()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional(),
    QUEUE_PREFIX: z.string().default("crs"),
    WORKER_CONCURRENCY: int(2, 1),
    /** Tries per job, the first included; retries wait JOB_BACKOFF_MS, then twice that, and so on. */
    JOB_ATTEMPTS: int(3, 1),
    JOB_BACKOFF_MS: int(1000, 0),

    MEILI_URL: url.optional(),
    MEILI_API_KEY: z.string().optional(),
    MEILI_INDEX: z.string().default("nodes"),

    /** Asset records in PostgreSQL (shared by every upload process); unset: a SQLite file under DATA_DIR. */
    DATABASE_URL: z
      .string()
      .trim()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
      .optional(),

    S3_ENDPOINT: url.optional(),
    S3_ACCESS_KEY: z.string().optional(),
    S3_SECRET_KEY: z.string().optional(),
    S3_BUCKET: z.string().optional(),
    S3_REGION: z.string().default("us-east-1"),
    S3_VIEW_MODE: z.enum(["redirect", "stream"]).default("stream"),
    S3_PRESIGN_SECONDS: int(300, 1),
  })
  .superRefine((c, ctx) => {
    // An upload stages for at most BODY_TIMEOUT_MS (then its body timer discards it); twice that is the margin.
    if (c.TEMP_MAX_AGE_MS < 2 * c.BODY_TIMEOUT_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["TEMP_MAX_AGE_MS"],
        message: `must be at least twice BODY_TIMEOUT_MS (${2 * c.BODY_TIMEOUT_MS} ms): an upload may be staging for that long`,
      });
    }
    if (c.S3_ENDPOINT) {
      for (const k of ["S3_ACCESS_KEY", "S3_SECRET_KEY", "S3_BUCKET"] as const) {
        if (!c[k]) ctx.addIssue({ code: "custom", path: [k], message: "is required when S3_ENDPOINT is set" });
      }
    }
  });

/** Every port resolved: the service's own variable, else PORT, else its default. */
const ResolvedConfigSchema = ConfigSchema.transform(({ PORT, SEARCH_PORT, UPLOAD_PORT, WORKER_PORT, ...rest }) => ({
  ...rest,
  PORT: PORT ?? DEFAULT_PORTS.gateway,
  SEARCH_PORT: SEARCH_PORT ?? PORT ?? DEFAULT_PORTS.search,
  UPLOAD_PORT: UPLOAD_PORT ?? PORT ?? DEFAULT_PORTS.upload,
  WORKER_PORT: WORKER_PORT ?? PORT ?? DEFAULT_PORTS.worker,
}));

export type Config = z.output<typeof ResolvedConfigSchema>;

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;
const withoutEmpty = (env: Env) => Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));

/** Parse the environment (or an override map, for tests). Empty strings count as unset. This is the one reader of `process.env`. */
export function loadConfig(env: Env = process.env): Config {
  const parsed = ResolvedConfigSchema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/**
 * The environment over a program's own defaults for what it leaves unset: a command-line tool
 * that prints its own progress keeps its log to warnings (`{ LOG_LEVEL: "warn" }`).
 */
export function loadConfigOver(programDefaults: Partial<Record<keyof z.input<typeof ConfigSchema>, string>>): Config {
  return loadConfig({ ...programDefaults, ...withoutEmpty(process.env) });
}
