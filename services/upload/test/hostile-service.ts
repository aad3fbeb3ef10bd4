import type { Server } from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, expect } from "vitest";
import { keyedClient } from "@app/testkit/keyed-client";
import { noisePng } from "@app/testkit/png";
import { KEY, makeTestApp, type TestApp } from "./helpers.ts";

/** One hostile file's service: listening on a port, with one image stored; `cases` counts the answers checked. */
export interface HostileService {
  t: TestApp;
  server: Server;
  validPng: Buffer;
  originalName: string;
  cases: number;
  /** A 4xx in the `{code, message, error}` shape (or a 200 when `allowOk` and the input was valid after all); counted. */
  assertRefusedOrOk(status: number, body: unknown, allowOk: boolean): void;
}

/**
 * The service a hostile test file sends its corpus to, started before its cases and closed after
 * them, when at least `minCases` answers must have been checked.
 */
export function hostileService(minCases: number): HostileService {
  const h = {
    cases: 0,
    assertRefusedOrOk(status: number, body: unknown, allowOk: boolean): void {
      h.cases++;
      if (allowOk && status === 200) return;
      expect(status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(status, JSON.stringify(body)).toBeLessThan(500);
      const b = body as Record<string, unknown>;
      expect(typeof b.code).toBe("string");
      expect(b.error).toBe(b.code);
      expect(typeof b.message).toBe("string");
    },
  } as HostileService;
  beforeAll(async () => {
    h.t = await makeTestApp({ settings: { maxBytes: 4 * 1024 * 1024, bodyTimeoutMs: 10_000 } });
    h.server = h.t.app.listen(0, "127.0.0.1");
    await new Promise((r) => h.server.once("listening", r));
    h.validPng = await noisePng(6, 6);
    const up = await keyedClient(h.server, KEY).post("/api/upload/image").attach("image", h.validPng, { filename: "o.png" });
    h.originalName = up.body.name;
  });
  afterAll(async () => {
    h.server.closeAllConnections();
    await new Promise((r) => h.server.close(r));
    await h.t.close();
    expect(h.cases).toBeGreaterThanOrEqual(minCases);
  });
  return h;
}

/** The asset routes' refusals: ComfyUI's envelope, `{error: {code: "UPPER_CASE", message, details}}`. */
export function assertAssetRefused(status: number, body: unknown): void {
  expect(status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
  expect(status, JSON.stringify(body)).toBeLessThan(500);
  const error = (body as { error?: Record<string, unknown> }).error;
  expect(typeof error?.code === "string" && /^[A-Z_]+$/.test(error.code), JSON.stringify(body)).toBe(true);
  expect(typeof error!.message).toBe("string");
  expect(typeof error!.details).toBe("object");
}

/** Text of every wrong kind for names, paths, tags and ids. */
export const nasty = fc.oneof(
  fc.constantFrom(
    "..",
    "../..",
    "/etc/passwd",
    "a/../../b",
    "\0",
    "a\0b",
    "C:\\Windows",
    "\\\\host\\share",
    "~/x",
    "%2e%2e/",
    "\u202e\u0000",
    "clipspace",
  ),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: fc.constantFrom(".", "/", "\\", "a", "\0", ":"), maxLength: 12 }),
);
