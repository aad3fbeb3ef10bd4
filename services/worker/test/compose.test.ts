import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JOB_NAMES } from "@app/contracts";
import type { JobHandlers } from "@app/jobs";
import { createLogger, loadConfig } from "@app/platform";
import { afterAll, describe, expect, it } from "vitest";
import { assertAllHandlers, createWorkerHandlers } from "../src/index.ts";

const noop = async () => ({}) as never;

describe("assertAllHandlers", () => {
  it("accepts one handler for every job name", () => {
    const all = Object.fromEntries(JOB_NAMES.map((n) => [n, noop])) as unknown as JobHandlers;
    expect(() => assertAllHandlers(all)).not.toThrow();
  });

  it("names every job left without a handler", () => {
    expect(() => assertAllHandlers({ "catalog.reindex": noop })).toThrow(/no handler for job mask\.derive/);
    expect(() => assertAllHandlers({})).toThrow(/mask\.derive, catalog\.reindex|catalog\.reindex, mask\.derive/);
  });

  it("refuses a handler under a name that is not a job", () => {
    const all = Object.fromEntries(JOB_NAMES.map((n) => [n, noop]));
    expect(() => assertAllHandlers({ ...all, "mask.derivee": noop } as never)).toThrow(/no job named mask\.derivee/);
  });

  it("refuses a handler that is not a function", () => {
    const all = Object.fromEntries(JOB_NAMES.map((n) => [n, noop]));
    expect(() => assertAllHandlers({ ...all, "mask.derive": "yes" } as never)).toThrow(/not a function/);
  });
});

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
