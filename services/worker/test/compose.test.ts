import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JOB_NAMES } from "@app/contracts";
import { assertAllHandlers } from "@app/jobs";
import { createLogger, loadConfig } from "@app/platform";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkerHandlers } from "../src/index.ts";

describe("createWorkerHandlers", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "worker-compose-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("composes a handler for every job name from the search and upload services", async () => {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent", CATALOG_SOURCE: "none" });
    const composed = await createWorkerHandlers(config, createLogger("worker-test", "silent"));
    try {
      expect(Object.keys(composed.handlers).sort()).toEqual([...JOB_NAMES].sort());
      expect(() => assertAllHandlers(composed.handlers)).not.toThrow();
    } finally {
      await composed.close();
    }
  });
});
