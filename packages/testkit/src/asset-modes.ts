import { mkdtempSync, rmSync } from "node:fs";
import type { RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "./postgres.ts";
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from "./redis.ts";
import { startS3, type RunningS3 } from "./s3rver.ts";

/**
 * The two ways of keeping assets, for the asset API suites (the upload service's, the gateway's):
 * environment to add, and how to take it down.
 */
export interface Mode {
  name: string;
  setup(dataDir: string): Promise<{ env: Record<string, string>; teardown(): Promise<void> }>;
}

/** Filesystem blobs, SQLite references, in-process jobs: the defaults. */
export const embeddedMode: Mode = { name: "embedded (fs + SQLite)", setup: async () => ({ env: {}, teardown: async () => undefined }) };

/** Redis jobs and limits, blobs on s3rver, references in PostgreSQL: the scaled deployment. */
export const atScaleMode: Mode = {
  name: "at scale (Redis + s3rver + PostgreSQL)",
  setup: async () => {
    const s3: RunningS3 = await startS3();
    const db: TestDatabase = await createTestDatabase("assets_api");
    const prefix = uniquePrefix("assets-api");
    return {
      env: {
        REDIS_URL: TEST_REDIS_URL,
        QUEUE_PREFIX: prefix,
        S3_ENDPOINT: s3.endpoint,
        S3_ACCESS_KEY: s3.accessKey,
        S3_SECRET_KEY: s3.secretKey,
        S3_BUCKET: "assets-api",
        DATABASE_URL: db.url,
      },
      async teardown() {
        await db.drop();
        await s3.stop();
        await deleteKeys([prefix]);
      },
    };
  },
};

export const assetModes: Mode[] = [embeddedMode, atScaleMode];

/** A service (or the gateway) started in a mode: its app, and its blob store opened on its own (to look at what is stored). */
export interface AssetApp<Blobs> {
  app: RequestListener;
  blobs: Blobs;
  close(): Promise<void>;
}

/**
 * Start what `start` composes from the environment it is given (a fresh DATA_DIR, `keys` as
 * API_KEYS, silent logs, and `mode`'s backends); closing it also takes the backends down and
 * removes the DATA_DIR.
 */
export async function startInMode<T extends { close(): Promise<void> }>(
  mode: Mode,
  keys: string[],
  start: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), "asset-mode-"));
  const backend = await mode.setup(dataDir);
  const started = await start({ DATA_DIR: dataDir, API_KEYS: keys.join(","), LOG_LEVEL: "silent", ...backend.env });
  return {
    ...started,
    async close() {
      await started.close();
      await backend.teardown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
