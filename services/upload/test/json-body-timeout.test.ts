import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCodeOf } from "@app/testkit/raw-http";
import { trickleJsonBodies } from "@app/testkit/slow-json-bodies";
import { KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

/**
 * The asset API's JSON bodies obey BODY_TIMEOUT_MS like upload bodies do: a body that trickles
 * in is answered 408 `request_timeout` once the timeout has passed and its connection is closed,
 * rather than held until Node's own request timeout (300 s).
 */
const BODY_TIMEOUT_MS = 400;
let t: TestApp;
let server: Server;
let base: string;
let id: string;

beforeAll(async () => {
  t = await makeTestApp({ settings: { bodyTimeoutMs: BODY_TIMEOUT_MS } });
  server = t.app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const up = await keyedClient(server, KEY)
    .post("/api/upload/image")
    .attach("image", await noisePng(8, 8), { filename: "a.png" });
  const made = await keyedClient(server, KEY)
    .post("/api/assets/from-hash")
    .send({ hash: `blake3:${up.body.name.slice(0, 64)}`, name: "kept" });
  expect(made.status).toBe(201);
  id = made.body.id;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await t.close();
});

describe("JSON bodies and BODY_TIMEOUT_MS", () => {
  it("a body sent a byte every 100 ms, on each JSON route: 408 request_timeout and the connection closed", async () => {
    // Far below Node's own 300 s: only BODY_TIMEOUT_MS can close them in time.
    const answers = await trickleJsonBodies(base, { key: KEY, id, everyMs: 100, timeoutMs: 10_000 });
    for (const a of answers) {
      expect(a.status, `${a.route}: ${a.text}`).toBe(408);
      expect(errorCodeOf(a.json), a.route).toBe("request_timeout");
      expect(a.headers.connection, a.route).toBe("close");
      expect(a.bytesSent, a.route).toBeLessThan(20);
    }
    // The record is untouched and the service still answers.
    const still = await keyedClient(server, KEY).get(`/api/assets/${id}`);
    expect(still.status).toBe(200);
    expect(still.body.name).toBe("kept");
  });

  it("a body that arrives in time is read as before", async () => {
    const res = await keyedClient(server, KEY)
      .put(`/api/assets/${id}`)
      .send({ user_metadata: { ok: true } });
    expect(res.status).toBe(200);
    expect(res.body.user_metadata).toEqual({ ok: true });
  });
});
