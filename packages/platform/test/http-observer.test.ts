import { Writable } from "node:stream";
import express from "express";
import { pino } from "pino";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { httpObserver, type Logger } from "../src/index.ts";

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level }, sink) as unknown as Logger, lines };
}

function app(logger: Logger, successLevel?: "debug" | "info") {
  const a = express();
  a.use(httpObserver({ service: "observer-test", logger, successLevel }));
  a.get("/ok", (_req, res) => {
    res.locals.logContext = { keyLabel: "ci" };
    res.json({ ok: true });
  });
  a.get("/bad", (_req, res) => {
    res.status(400).json({ error: "bad" });
  });
  a.get("/healthz", (_req, res) => {
    res.json({});
  });
  a.get("/readyz", (_req, res) => {
    res.status(503).json({ status: "starting" });
  });
  a.get("/broken", (_req, res) => {
    res.status(503).json({ error: "down" });
  });
  return a;
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe("httpObserver", () => {
  it("logs method, path without the query string, status, request id and handler context", async () => {
    const { logger, lines } = capture("info");
    await request(app(logger, "info")).get("/ok?api_key=secret-in-query").set("x-request-id", "gw-1").expect(200);
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: "gw-1", method: "GET", path: "/ok", status: 200, keyLabel: "ci", msg: "request" });
    expect(JSON.stringify(lines)).not.toContain("secret-in-query");
  });

  it("keeps successes at debug by default, logs client errors at info, and skips health probes", async () => {
    const { logger, lines } = capture("info");
    const a = app(logger);
    await request(a).get("/ok").expect(200);
    await request(a).get("/healthz").expect(200);
    await request(a).get("/bad").expect(400);
    await settle();
    expect(lines.map((l) => l.path)).toEqual(["/bad"]);
    expect(lines[0]!.level).toBe(30);
  });

  it("logs /readyz answering 503 while the service starts at info, not error; another 503 stays an error", async () => {
    const { logger, lines } = capture("info");
    const a = app(logger);
    await request(a).get("/readyz").expect(503);
    await request(a).get("/broken").expect(503);
    await settle();
    expect(lines.map((l) => [l.path, l.level])).toEqual([
      ["/readyz", 30],
      ["/broken", 50],
    ]);
  });
});
