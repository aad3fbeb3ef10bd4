import { mkdtempSync, rmSync } from "node:fs";
import type { RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import { createBlobStore, type ChosenBlobStore } from "@app/blobs";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from "@app/testkit/redis";
import { startS3, type RunningS3 } from "@app/testkit/s3rver";

/** The gateway's two ways of keeping assets, for the asset API suites: environment to add, and how to take it down. */
export interface Mode {
  name: string;
  setup(dataDir: string): Promise<{ env: Record<string, string>; teardown(): Promise<void> }>;
}

export const assetModes: Mode[] = [
  { name: "embedded (fs + SQLite)", setup: async () => ({ env: {}, teardown: async () => undefined }) },
  {
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
  },
];


export interface AssetGateway {
  app: RequestListener;
  /** The gateway's blob store, opened on its own (to look at what is stored). */
  store: ChosenBlobStore;
  close(): Promise<void>;
}

/** The real gateway composed from config in `mode`, over a fresh DATA_DIR, accepting `keys` (each its own owner). */
export async function startAssetGateway(mode: Mode, keys: string[]): Promise<AssetGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-assets-"));
  const backend = await mode.setup(dataDir);
  const config = loadConfig({ DATA_DIR: dataDir, API_KEYS: keys.join(","), LOG_LEVEL: "silent", ...backend.env });
  const logger = createLogger("gw-assets", "silent");
  const composed = await composeGateway(config, logger);
  const closables: Closable[] = composed.closables;
  const store = await createBlobStore(config);
  return {
    app: createGatewayApp({ services: composed.services, logger }),
    store,
    async close() {
      for (const c of closables) await c.close();
      await store.close();
      await backend.teardown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
