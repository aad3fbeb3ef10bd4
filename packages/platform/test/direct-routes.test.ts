import { Writable } from "node:stream";
import express from "express";
import { pino } from "pino";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { directRoutesFirst, httpObserver, registry, type Logger } from "../src/index.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: "debug" }, sink) as unknown as Logger, lines };
}

/** Express answers `{via: "express"}` everywhere; the direct route answers `{via: "direct"}` on its paths. */
function listener(logger: Logger) {
  const app = express();
  app.use(httpObserver({ service: "direct-test", logger }));
  app.use((req, res) => {
    res.json({ via: "express", path: req.path });
  });
  return directRoutesFirst(
    app,
    [
      {
        paths: ["/things", "/things/search"],
        handle: (_req, res) => {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ via: "direct" }));
        },
      },
    ],
    { service: "direct-test", logger },
  );
}

/** GET 200s counted for `route` so far. */
async function served(route: string): Promise<number> {
  const line = (await registry.metrics())
    .split("\n")
    .find((l) => l.startsWith(`http_requests_total{service="direct-test",route="${route}",method="GET",status="200"}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe("directRoutesFirst", () => {
  it("answers GET and HEAD on a route's exact paths before Express, query strings included", async () => {
    const l = listener(capture().logger);
    expect((await request(l).get("/things/search?q=a&b=c").expect(200)).body).toEqual({ via: "direct" });
    expect((await request(l).get("/things").expect(200)).body).toEqual({ via: "direct" });
    const head = await request(l).head("/things/search?q=a").expect(200);
    expect(head.text ?? "").toBe("");
  });

  it("leaves every other method, path and spelling to Express", async () => {
    const l = listener(capture().logger);
    for (const path of ["/things/", "/Things", "/things/search/", "/things/other", "/elsewhere?x=/things"]) {
      expect((await request(l).get(path).expect(200)).body).toMatchObject({ via: "express" });
    }
    expect((await request(l).post("/things").expect(200)).body).toMatchObject({ via: "express" });
  });

  it("observes a direct request as Express's observer does: request id kept or made, access log, metrics by route", async () => {
    const { logger, lines } = capture();
    const l = listener(logger);
    const before = { search: await served("/things/search"), things: await served("/things") };
    const kept = await request(l).get("/things/search?secret=in-query").set("x-request-id", "gw-7").expect(200);
    expect(kept.headers["x-request-id"]).toBe("gw-7");
    const made = await request(l).get("/things").expect(200);
    expect(made.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    await settle();
    expect(lines[0]).toMatchObject({ reqId: "gw-7", method: "GET", path: "/things/search", status: 200, msg: "request" });
    expect(JSON.stringify(lines)).not.toContain("in-query");
    expect(await served("/things/search")).toBe(before.search + 1);
    expect(await served("/things")).toBe(before.things + 1);
  });
});
