import { once } from "node:events";
import { readdir } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { privateHarness, type PrivateHarness } from "./harness.ts";
import { PACK_ZIP, pathOf, publish, publishBody, publisherWithToken } from "./publish-flow.ts";
import { zipOf } from "@app/testkit/zip-files";

let h: PrivateHarness;
afterEach(() => h.close());

/** Every file under `dir` (the blob store, the incoming folder), so a refusal can be shown to leave none. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

async function leftBehind(): Promise<{ blobs: string[]; incoming: string[]; versions: number }> {
  return {
    blobs: await filesUnder(join(h.dataDir, "blobs")),
    incoming: await filesUnder(join(h.dataDir, "private-packs", "incoming")),
    versions: (await h.packs.repo.versions("team-nodes")).length,
  };
}

const NOTHING = { blobs: [], incoming: [], versions: 0 };

describe("a refused archive answers 4xx with the reason and leaves nothing", () => {
  const cases: [string, Buffer, string][] = [
    [
      "zip-slip",
      zipOf([
        { name: "__init__.py", data: "" },
        { name: "../../evil.py", data: "x" },
      ]),
      "climbs out of the folder",
    ],
    ["a backslash zip-slip", zipOf([{ name: "sub\\..\\..\\evil.py", data: "x" }]), "climbs out of the folder"],
    ["an absolute path", zipOf([{ name: "/etc/cron.d/evil", data: "x" }]), "absolute path"],
    ["a drive path", zipOf([{ name: "C:/Windows/evil.dll", data: "x" }]), "absolute path"],
    ["a symbolic link", zipOf([{ name: "link", data: "/etc/passwd", symlink: true }]), "symbolic link"],
    ["a zip bomb (ratio)", zipOf([{ name: "zeros.bin", data: Buffer.alloc(20 * 1024 * 1024), deflate: true }]), "unpacks to more than"],
    ["not a zip", Buffer.from("this is not an archive at all, just text"), "not a readable zip archive"],
  ];
  for (const [what, zip, reason] of cases) {
    it(what, async () => {
      h = await privateHarness();
      const token = await publisherWithToken(h.app);
      const res = await publish(h.app, token, "team-nodes", "1.0.0", zip);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(reason);
      expect(await leftBehind()).toEqual(NOTHING);
    });
  }

  it("an archive over the unpacked-size cap, whatever its ratio", async () => {
    h = await privateHarness([], { PUBLISH_MAX_UNPACKED_BYTES: "1000" });
    const token = await publisherWithToken(h.app);
    const res = await publish(h.app, token, "team-nodes", "1.0.0", zipOf([{ name: "a.txt", data: Buffer.alloc(2000, 1) }]));
    expect([res.status, res.body.message]).toEqual([400, expect.stringContaining("PUBLISH_MAX_UNPACKED_BYTES")]);
    expect(await leftBehind()).toEqual(NOTHING);
  });

  it("an archive over UPLOAD_MAX_BYTES is 413", async () => {
    h = await privateHarness([], { UPLOAD_MAX_BYTES: "100" });
    const token = await publisherWithToken(h.app);
    const res = await publish(h.app, token, "team-nodes", "1.0.0");
    expect(res.status).toBe(413);
    expect(await leftBehind()).toEqual(NOTHING);
  });
});

describe("a PUT cut halfway", () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it("leaves no version and no file, and its URL is spent", async () => {
    h = await privateHarness();
    const token = await publisherWithToken(h.app);
    const started = await request(h.app)
      .post("/publishers/team-a/nodes/team-nodes/versions")
      .send(publishBody(token, "team-nodes", "1.0.0"));
    server = createServer(h.app).listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method: "PUT",
      path: pathOf(started.body.signedUrl),
      headers: { "content-type": "application/zip", "content-length": PACK_ZIP.length },
    });
    req.on("error", () => {});
    req.write(PACK_ZIP.subarray(0, PACK_ZIP.length >> 1));
    // The half has arrived once the incoming file holds it; then the connection drops.
    while ((await filesUnder(join(h.dataDir, "private-packs", "incoming"))).length === 0) await new Promise((r) => setImmediate(r));
    req.destroy();
    while ((await filesUnder(join(h.dataDir, "private-packs", "incoming"))).length > 0) await new Promise((r) => setImmediate(r));
    expect(await leftBehind()).toEqual(NOTHING);
    expect((await request(h.app).put(pathOf(started.body.signedUrl)).send(PACK_ZIP)).status).toBe(403);
  });
});

describe("PUBLISH_SCAN_COMMAND", () => {
  it("flags a version whose scan exits non-zero, with the scan's output as its reason", async () => {
    h = await privateHarness([], { PUBLISH_SCAN_COMMAND: `f() { echo "$1: Eicar-Signature FOUND"; return 1; }; f` });
    const token = await publisherWithToken(h.app);
    expect((await publish(h.app, token, "team-nodes", "1.0.0")).status).toBe(200);
    const v = await h.packs.repo.version("team-nodes", "1.0.0");
    expect(v?.status).toBe("NodeVersionStatusFlagged");
    expect(v?.statusReason).toMatch(/\.zip: Eicar-Signature FOUND$/);
  });

  it("leaves a clean archive Active, or Pending under PUBLISH_REVIEW=on", async () => {
    h = await privateHarness([], { PUBLISH_SCAN_COMMAND: "true", PUBLISH_REVIEW: "on" });
    const token = await publisherWithToken(h.app);
    expect((await publish(h.app, token, "team-nodes", "1.0.0")).status).toBe(200);
    expect((await h.packs.repo.version("team-nodes", "1.0.0"))?.status).toBe("NodeVersionStatusPending");
  });
});
