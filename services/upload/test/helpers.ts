import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { blake3 } from "@napi-rs/blake-hash";
import type { Express } from "express";
import { pino } from "pino";
import { InProcessJobQueue, type JobQueue } from "@app/jobs";
import { loadApiKeys } from "../src/adapters/keys/api-keys.ts";
import { FsBlobStore, type ChosenBlobStore } from "@app/blobs";
import type { ReferenceStore } from "../src/adapters/references/reference-store.ts";
import { createSqliteReferenceStore } from "../src/adapters/references/sqlite-reference-store.ts";
import { createApp } from "../src/app.ts";
import { createTusServer } from "../src/compose.ts";
import { createMaskDeriveHandler } from "../src/jobs/mask-derive.ts";
import { DEFAULT_SETTINGS, type UploadDeps, type UploadSettings } from "../src/http/deps.ts";
import { multipart as buildMultipart, type Part } from "@app/testkit/raw-http";

export const KEY = "test-key-0123456789abcdef";
export const OTHER_KEY = "second-key-with-another-label";

/** A store the tests can also ask for its blobs and temporaries (neither is part of the BlobStore port). */
export type InspectableStore = ChosenBlobStore;

export interface TestApp {
  app: Express;
  deps: UploadDeps;
  blobs: InspectableStore;
  dataDir: string;
  logs: string[];
  close(): Promise<void>;
}

/** The upload service over a fresh temporary DATA_DIR, real filesystem and real sharp, logs captured. */
export async function makeTestApp(
  opts: {
    settings?: Partial<UploadSettings>;
    queue?: JobQueue;
    keys?: string;
    keyFile?: string;
    blobs?: InspectableStore;
    references?: ReferenceStore;
  } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), "upload-test-"));
  const blobs: InspectableStore = opts.blobs ?? new FsBlobStore(join(dataDir, "blobs"));
  await blobs.init();
  const references = opts.references ?? createSqliteReferenceStore(join(dataDir, "assets.sqlite"));
  await references.init();
  const logs: string[] = [];
  const capture = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: "trace", redact: ["req.headers['x-api-key']", "req.headers.authorization"] }, capture);
  const queue = opts.queue ?? new InProcessJobQueue();
  await queue.work({ "mask.derive": createMaskDeriveHandler({ store: blobs, logger }) });
  const keys = await loadApiKeys({ plaintext: opts.keys ?? `${KEY},${OTHER_KEY}`, ...(opts.keyFile && { file: opts.keyFile }) });
  const settings = { ...DEFAULT_SETTINGS, ...opts.settings };
  const deps: UploadDeps = {
    blobs,
    references,
    keys,
    queue,
    logger,
    settings,
    tus: createTusServer({ blobs, references, logger, settings }),
  };
  return {
    app: createApp(deps),
    deps,
    blobs,
    dataDir,
    logs,
    async close() {
      await queue.close();
      await references.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Test apps served on loopback ports (a real socket, for clients such as tus-js-client); `closeAll` in afterEach. */
export function servedApps() {
  const served: { t: TestApp; server: Server }[] = [];
  return {
    /** Listen with `server` (default: a plain Node server) and answer the base URL. */
    async serve(t: TestApp, server: Server = createServer(t.app)): Promise<string> {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      served.push({ t, server });
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async closeAll(): Promise<void> {
      for (const { t, server } of served.splice(0)) {
        server.closeAllConnections();
        server.close();
        await t.close();
      }
    },
  };
}

export const blake3Hex = (b: Buffer): string => blake3(b).toString("hex");

/** Upload tests' own boundary: `hostile.test.ts` names it in a Content-Type. */
export const TEST_BOUNDARY = "----testboundary7MA4YWxk";

/** A hand-built multipart body, for bodies supertest will not write (truncated, odd headers). */
export function multipart(parts: Part[], boundary = TEST_BOUNDARY): { body: Buffer; contentType: string } {
  return buildMultipart(parts, boundary);
}

export function expectUploadError(body: unknown, code: string): void {
  const b = body as { code?: unknown; message?: unknown; error?: unknown };
  if (b.code !== code || b.error !== code || typeof b.message !== "string" || b.message.length === 0) {
    throw new Error(`expected {code: ${code}, error: ${code}, message}, got ${JSON.stringify(body)}`);
  }
}
