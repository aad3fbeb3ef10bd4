import { once } from "node:events";
import { rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, upload } from "@app/testkit/assets";
import { record } from "@app/testkit/figures";
import { SCRIPTS, startService, tempDir, type Service } from "@app/testkit/processes";
import { noiseImage } from "@app/testkit/png";

/**
 * A thousand connections that send nothing (and a thousand that stop halfway through their
 * request head) do not keep anyone else from being served by the gateway.
 */
let dir: string;
let gw: Service;
const sockets: Socket[] = [];

beforeAll(async () => {
  dir = await tempDir("idle");
  gw = await startService(SCRIPTS.gateway, { DATA_DIR: join(dir, "data"), API_KEYS: KEY });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function open(count: number, firstBytes?: string): Promise<Socket[]> {
  const opened: Socket[] = [];
  for (let i = 0; i < count; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, async () => {
        const s = connect(gw.port, "127.0.0.1");
        s.on("error", () => undefined);
        await once(s, "connect");
        if (firstBytes) s.write(firstBytes);
        return s;
      }),
    );
    opened.push(...batch);
  }
  sockets.push(...opened);
  return opened;
}

async function servedNormally(): Promise<void> {
  const search = await fetch(`${gw.url}/nodes/search?search=x`, { signal: AbortSignal.timeout(10_000) });
  expect(search.status).toBe(200);
  const a = await upload(gw.url, await noiseImage(16, 16), { timeoutMs: 10_000 });
  expect(a.status).toBe(200);
}

describe("idle connections", () => {
  it("1,000 silent connections and 1,000 half-sent request heads: others are still served", async () => {
    const rssBefore = gw.rssKiB();
    const silent = await open(1000);
    await servedNormally();
    const halfway = await open(1000, "POST /api/upload/image HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Ke");
    await servedNormally();
    // Many fresh clients at once, beside the 2,000 held connections.
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => fetch(`${gw.url}/nodes/search`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status)),
    );
    expect(answers).toEqual(Array(50).fill(200));
    const rssHeld = gw.rssKiB();
    // The held connections are still open (nobody was refused for them), and the server is still up.
    expect(silent.filter((s) => !s.destroyed).length).toBe(1000);
    expect(halfway.filter((s) => !s.destroyed).length).toBe(1000);
    for (const s of [...silent, ...halfway]) s.destroy();
    await servedNormally();
    expect(rssHeld - rssBefore, "RSS for 2,000 held connections").toBeLessThan(150 * 1024);
    record("idle-connections", { held: 2000, rssBeforeMiB: +(rssBefore / 1024).toFixed(1), rssWithHeldMiB: +(rssHeld / 1024).toFixed(1) });
  });
});
