import { mkdtemp, rm } from "node:fs/promises";
import type { RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedSearchEngine } from "../../src/adapters/embedded/embedded-engine.ts";
import { createApp } from "../../src/app.ts";
import type { StoredNode } from "../../src/domain/catalog-record.ts";
import { loadConfig } from "@app/platform";
import { createArchiveBlobs } from "../../src/adapters/archives/archive-blobs.ts";
import { createPrivatePacks, privatePackSettings, type PrivatePacks } from "../../src/private-packs/index.ts";
import type { KeyVerifier } from "../../src/private-packs/http/key-access.ts";
import type { PrivateOverlayEngine } from "../../src/private-packs/private-overlay-engine.ts";
import { openPrivatePackRepository } from "../../src/private-packs/store/sql-private-pack-repository.ts";
import { silentLogger } from "../helpers.ts";

/** Two principals' keys, as the key file would name them. */
export const KEYS: Record<string, string> = { "alice-key": "alice", "bob-key": "bob" };
export const testKeys: KeyVerifier = { verify: (k) => (KEYS[k] ? { label: KEYS[k] } : null) };

export interface PrivateHarness {
  app: RequestListener;
  packs: PrivatePacks;
  engine: PrivateOverlayEngine;
  dataDir: string;
  blobs: Awaited<ReturnType<typeof createArchiveBlobs>>;
  close(): Promise<void>;
}

/** The search app over `mirrored` with private packs on a SQLite file in a temp DATA_DIR. */
export async function privateHarness(mirrored: StoredNode[] = [], env: Record<string, string> = {}): Promise<PrivateHarness> {
  const dataDir = await mkdtemp(join(tmpdir(), "private-packs-app-"));
  const config = loadConfig({ DATA_DIR: dataDir, CATALOG_SOURCE: "none", ...env });
  const repo = await openPrivatePackRepository({ sqliteFile: join(dataDir, "private-packs.sqlite") });
  const blobs = await createArchiveBlobs(config);
  const packs = createPrivatePacks({
    repo,
    blobs,
    inner: new EmbeddedSearchEngine(),
    keys: testKeys,
    logger: silentLogger,
    settings: privatePackSettings(config),
  });
  const engine = packs.engine;
  await engine.refreshPrivate();
  await engine.replaceAll(mirrored);
  const app = createApp({ engine, logger: silentLogger, isReady: () => true, privatePacks: packs });
  return {
    app,
    packs,
    engine,
    dataDir,
    blobs,
    async close() {
      await packs.close();
      await blobs.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
