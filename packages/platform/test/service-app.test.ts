import { Router, type ErrorRequestHandler } from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createLogger, createServiceApp, type ServiceAppOptions } from "../src/index.ts";

function app(overrides: Partial<ServiceAppOptions> = {}) {
  const router = Router();
  router.get("/things/:id", (req, res) => {
    res.json({ id: req.params.id });
  });
  router.get("/boom", () => {
    throw new Error("kaput");
  });
  return createServiceApp({
    name: "svc-app-test",
    logger: createLogger("svc-app-test", "silent"),
    router,
    isReady: () => true,
    notReadyBody: { error: "not_ready", message: "still starting" },
    notFoundBody: (req) => ({ error: "not_found", message: `no route ${req.method} ${req.path}` }),
    ...overrides,
  });
}

describe("createServiceApp", () => {
  it("answers /healthz with a request id and neither x-powered-by nor an ETag", async () => {
    const res = await request(app()).get("/healthz").expect(200, { status: "ok" });
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers["x-powered-by"]).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
    const kept = await request(app()).get("/healthz").set("x-request-id", "from-the-gateway.1").expect(200);
    expect(kept.headers["x-request-id"]).toBe("from-the-gateway.1");
  });

  it("answers /readyz 200 when ready and 503 with the service's body when not, or when the check fails", async () => {
    await request(app({ isReady: async () => true }))
      .get("/readyz")
      .expect(200, { status: "ready" });
    const notReady = { error: "not_ready", message: "still starting" };
    await request(app({ isReady: () => false }))
      .get("/readyz")
      .expect(503, notReady);
    await request(app({ isReady: async () => false }))
      .get("/readyz")
      .expect(503, notReady);
    await request(app({ isReady: () => Promise.reject(new Error("backend down")) }))
      .get("/readyz")
      .expect(503, notReady);
    await request(
      app({
        isReady: () => {
          throw new Error("backend down");
        },
      }),
    )
      .get("/readyz")
      .expect(503, notReady);
  });

  it("serves the router, /metrics counting its routes, and a 404 in the service's shape", async () => {
    const a = app();
    await request(a).get("/things/7").expect(200, { id: "7" });
    await request(a).post("/things/7").expect(404, { error: "not_found", message: "no route POST /things/7" });
    const metrics = await request(a).get("/metrics").expect(200);
    expect(metrics.headers["content-type"]).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(/http_requests_total\{service="svc-app-test",route="\/things\/:id",method="GET",status="200"\} 1/);
  });

  it("hands what the router throws to the service's error handler", async () => {
    const errorHandler: ErrorRequestHandler = (err: Error, _req, res, _next) => {
      res.status(500).json({ error: "internal", message: err.message });
    };
    await request(app({ errorHandler })).get("/boom").expect(500, { error: "internal", message: "kaput" });
  });

  it("runs the service's middleware before every route, health included", async () => {
    const seen: string[] = [];
    const a = app({
      middleware: [
        (req, _res, next) => {
          seen.push(req.path);
          next();
        },
      ],
    });
    await request(a).get("/healthz").expect(200);
    await request(a).get("/things/1").expect(200);
    await request(a).get("/nowhere").expect(404);
    expect(seen).toEqual(["/healthz", "/things/1", "/nowhere"]);
  });

  it("serves health, readiness and metrics without a router (a process with no API)", async () => {
    const a = app({ router: undefined });
    await request(a).get("/healthz").expect(200, { status: "ok" });
    await request(a).get("/readyz").expect(200, { status: "ready" });
    await request(a).get("/metrics").expect(200);
    await request(a).get("/things/1").expect(404, { error: "not_found", message: "no route GET /things/1" });
  });
});
