import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import express, { Router } from "express";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@app/platform";
import { createGatewayApp } from "../src/app.ts";
import type { GatewayService } from "../src/service-mount.ts";

const logger = createLogger("gateway-test", "silent");

/** A real upstream: answers its own routes and reports the request id it was given. */
function upstreamRouter(name: string): Router {
  const r = Router();
  r.get(`/${name}/hello`, (req, res) => {
    res.json({ from: name, requestId: req.headers["x-request-id"], query: req.query });
  });
  r.get(`/${name}/boom`, () => {
    throw new Error("kaboom");
  });
  return r;
}

const searchService = (mount: GatewayService["mount"]): GatewayService => ({
  name: "search",
  paths: ["/nodes"],
  mount,
  unavailableBody: (message) => ({ error: "service_unavailable", message }),
});

const uploadService = (mount: GatewayService["mount"]): GatewayService => ({
  name: "upload",
  paths: ["/upload"],
  mount,
  unavailableBody: (message) => ({ code: "unavailable", message, error: "unavailable" }),
});

describe("gateway, embedded services", () => {
  let ready = false;
  const app = createGatewayApp({
    logger,
    services: [
      searchService({ kind: "embedded", router: upstreamRouter("nodes"), isReady: () => ready }),
      uploadService({ kind: "embedded", router: upstreamRouter("upload"), isReady: () => true }),
    ],
  });

  it("routes to the mounted service and gives every request an id", async () => {
    const res = await request(app).get("/nodes/hello?x=1").expect(200);
    expect(res.body).toMatchObject({ from: "nodes", query: { x: "1" } });
    expect(res.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers["x-request-id"]).toBe(res.body.requestId);
  });

  it("keeps a well-formed incoming request id and replaces a malformed one", async () => {
    const kept = await request(app).get("/nodes/hello").set("x-request-id", "abc-123").expect(200);
    expect(kept.body.requestId).toBe("abc-123");
    const replaced = await request(app).get("/nodes/hello").set("x-request-id", "bad id\twith spaces").expect(200);
    expect(replaced.body.requestId).not.toBe("bad id\twith spaces");
  });

  it("answers /healthz at once and /readyz only when every service mounted in it is ready", async () => {
    await request(app).get("/healthz").expect(200);
    const notReady = await request(app).get("/readyz").expect(503);
    expect(notReady.body).toEqual({ status: "starting", ready: false, services: { search: false, upload: true } });
    ready = true;
    const nowReady = await request(app).get("/readyz").expect(200);
    expect(nowReady.body).toEqual({ status: "ready", ready: true, services: { search: true, upload: true } });
  });

  it("answers unknown routes 404 in the {error, message} shape", async () => {
    const res = await request(app).get("/nope").expect(404);
    expect(res.body).toEqual({ error: "not_found", message: expect.stringContaining("/nope") });
  });

  it("answers an unexpected error 500 {error, message} with the request id", async () => {
    const res = await request(app).get("/nodes/boom").set("x-request-id", "req-42").expect(500);
    expect(res.body.error).toBe("internal_error");
    expect(res.body.message).toContain("req-42");
  });

  it("serves Prometheus metrics with request counts by route", async () => {
    const res = await request(app).get("/metrics").expect(200);
    expect(res.text).toContain('http_requests_total{service="gateway"');
  });
});

describe("gateway, proxied services", () => {
  let upstream: Server;
  let url: string;

  beforeAll(async () => {
    const up = express();
    up.use(upstreamRouter("nodes"));
    up.get("/readyz", (_req, res) => {
      res.json({ ok: true });
    });
    upstream = createServer(up).listen(0, "127.0.0.1");
    await once(upstream, "listening");
    url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    upstream.close();
  });

  it("proxies matching paths with the query string and the request id", async () => {
    const app = createGatewayApp({ logger, services: [searchService({ kind: "proxy", url })] });
    const res = await request(app).get("/nodes/hello?search=impact%20pack").set("x-request-id", "r-1").expect(200);
    expect(res.body).toEqual({ from: "nodes", requestId: "r-1", query: { search: "impact pack" } });
    await request(app).get("/readyz").expect(200);
    await request(app).get("/nodesx/hello").expect(404);
  });

  it("answers 502 in each service's own error shape when it is down, and the other face keeps working", async () => {
    const dead = "http://127.0.0.1:9"; // discard port: nothing listens there
    const app = createGatewayApp({
      logger,
      services: [
        searchService({ kind: "proxy", url: dead }),
        uploadService({ kind: "embedded", router: upstreamRouter("upload"), isReady: () => true }),
      ],
    });
    const search = await request(app).get("/nodes/hello").expect(502);
    expect(search.body).toEqual({ error: "service_unavailable", message: expect.any(String) });
    await request(app).get("/upload/hello").expect(200);
    // The gateway's readiness is its own: a proxied service that is down is reported, not gating.
    const ready = await request(app).get("/readyz").expect(200);
    expect(ready.body).toEqual({ status: "ready", ready: true, services: { search: false, upload: true } });

    const app2 = createGatewayApp({ logger, services: [uploadService({ kind: "proxy", url: dead })] });
    const upload = await request(app2).get("/upload/hello").expect(502);
    expect(upload.body).toEqual({ code: "unavailable", error: "unavailable", message: expect.any(String) });
  });
});
