import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

/** A number knob: coerced from its string, the fallback when unset. */
const count = (fallback: number) => z.coerce.number().finite().nonnegative().default(fallback);

/**
 * Every environment variable the tests, the reliability suite, the benches and the bench servers
 * read, with its default. Services read theirs through their config schema instead; this is the
 * only other place that reads the environment.
 */
const schema = z.object({
  // --- what the tests talk to ---
  /** A Redis for the tests; unset means 127.0.0.1:6379, which the global setup starts if nothing answers there. */
  REDIS_TEST_URL: z.string().optional(),
  /** A Meilisearch to run the engine conformance suite against; unset skips that suite. */
  MEILI_URL: z.string().optional(),
  MEILI_API_KEY: z.string().optional(),
  /** A PostgreSQL for the tests; each test creates its own database there. */
  POSTGRES_TEST_URL: z.string().default("postgres://postgres@127.0.0.1:5432/postgres"),
  /** The Chromium the browser tests drive. */
  CHROMIUM_PATH: z.string().default("/usr/bin/chromium"),
  /** The public registry's catalog as NDJSON, for the relevance tests; unset: the shared data folder next to the repository. */
  REAL_CATALOG_PATH: z.string().optional(),
  /** Where children spawned with a bare environment look for their programs. */
  PATH: z.string().default("/usr/bin:/bin"),

  // --- the reliability suite ---
  /** Size of the long upload, in MiB. */
  LONG_UPLOAD_MIB: count(320),
  /** The long upload's pace, in bytes per second. */
  LONG_UPLOAD_BPS: count(1_000_000),
  /** The NDJSON file the reliability figures are appended to. */
  RELIABILITY_FIGURES: z.string().default(join(tmpdir(), "reliability-figures.ndjson")),

  // --- the benches ---
  /** Nodes in the synthetic catalog of the in-process search bench. */
  SYNTHETIC_NODES: count(1_000_000),
  /** Asset records in the store; unset: 1,000,000 for asset-list, 200,000 for asset-store-event-loop. */
  ASSET_BENCH_REFS: z.coerce.number().finite().nonnegative().optional(),
  /** Comma-separated databases asset-list measures. */
  ASSET_BENCH_DATABASES: z.string().default("postgres,sqlite"),
  /** Concurrent readers and uploaders in asset-store-event-loop. */
  ASSET_BENCH_READERS: count(4),
  ASSET_BENCH_UPLOADERS: count(4),
  /** Size of the file the asset upload and download benches move, in MiB, and how many rounds. */
  ASSET_BENCH_MIB: count(1024),
  ASSET_BENCH_ROUNDS: count(3),
  /** Size of the tus upload bench's file, in MiB, and how many rounds. */
  TUS_BENCH_MIB: count(1024),
  TUS_BENCH_ROUNDS: count(3),
  /** Size of the archive the pull-through bench serves, in MiB. */
  ARCHIVE_BENCH_MIB: count(256),
  /** "1": the catalog-mirror bench runs only its mirror passes. */
  MIRROR_PASSES_ONLY: z
    .string()
    .optional()
    .transform((v) => v === "1"),
  /** A checkout of the code before a change, for mask-derive to compare with; unset measures this tree only. */
  MASK_BENCH_BEFORE: z.string().optional(),

  // --- the bench servers (child processes configured by their parent) ---
  PORT: z.coerce.number().int().nonnegative().optional(),
  HOST: z.string().default("127.0.0.1"),
  /** The upload sink's durability (hash, write or sync; the sink checks it) and its directory (a temporary one when unset). */
  SINK_DURABILITY: z.string().optional(),
  SINK_DIR: z.string().optional(),
  /** The JSON file of pages the sample-pages server answers. */
  SAMPLE_PAGES_FILE: z.string().optional(),
  /** The file the file-read server sends, and its read size in KiB (also the asset download bench's baseline). */
  READ_FILE: z.string().optional(),
  READ_CHUNK_KIB: count(1024),

  /** The s3rver child's storage directory. */
  DIRECTORY: z.string().optional(),

  // --- the jobs crash-test worker (a child process) ---
  REDIS_URL: z.string().optional(),
  QUEUE_PREFIX: z.string().optional(),
});

export type TestEnv = z.infer<typeof schema>;

/** The environment as the tests, benches and their children read it, parsed once. */
export const testEnv: TestEnv = schema.parse(process.env);

/** A knob a child process cannot run without; throws naming it when its parent did not set it. */
export function requiredEnv<K extends keyof TestEnv>(name: K): NonNullable<TestEnv[K]> {
  const value = testEnv[name];
  if (value === undefined || value === "") throw new Error(`${name} is required`);
  return value;
}

/** This process's whole environment with `extra` on top, for a child that should inherit it. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}
