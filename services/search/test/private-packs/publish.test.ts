import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { digestOf } from "../../src/private-packs/domain/secrets.ts";
import { FIXTURES } from "../helpers.ts";
import { privateHarness, type PrivateHarness } from "./harness.ts";
import { PACK_ZIP, pathOf, publish, publishBody, publisherWithToken } from "./publish-flow.ts";

let h: PrivateHarness;
let token: string;
beforeEach(async () => {
  h = await privateHarness(FIXTURES);
  token = await publisherWithToken(h.app);
});
afterEach(() => h.close());

const post = (path: string, body: unknown) =>
  request(h.app)
    .post(path)
    .set("content-type", "application/json")
    .send(body as object);

describe("POST /publishers/{publisherId}/nodes/{nodeId}/versions", () => {
  it("answers 201 with the version to be and a signed URL on this instance, and publishes nothing yet", async () => {
    const res = await post("/publishers/team-a/nodes/team-nodes/versions", publishBody(token, "team-nodes", "1.2")).set(
      "host",
      "registry.internal:8080",
    );
    expect(res.status).toBe(201);
    expect(res.body.node_version).toMatchObject({
      id: expect.any(String),
      version: "1.2.0",
      dependencies: ["numpy"],
      deprecated: false,
      changelog: "",
      status: "NodeVersionStatusActive",
      downloadUrl: "http://registry.internal:8080/archives/team-nodes/1.2.0/node.zip",
    });
    expect(res.body.signedUrl).toMatch(
      /^http:\/\/registry\.internal:8080\/publishers\/team-a\/nodes\/team-nodes\/versions\/1\.2\.0\/node\.zip\?signature=cru_/,
    );
    expect(await h.packs.repo.node("team-nodes")).toBeNull();
  });

  it("applies registry-backend's checks in its order, with its messages", async () => {
    const other = await publisherWithToken(h.app, "team-b");
    expect((await publish(h.app, token, "team-nodes", "1.0.0")).status).toBe(200);
    const cases: [string, unknown, number, Record<string, string>][] = [
      // 3: the node is team-a's
      ["/publishers/team-b/nodes/team-nodes/versions", publishBody(other, "team-nodes", "2.0.0"), 403, { message: "Permission denied" }],
      // 4: no such publisher
      ["/publishers/nobody/nodes/x-pack/versions", publishBody(token, "x-pack", "1.0.0"), 400, { message: "Failed to validate token" }],
      // 5: another publisher's token, and none
      [
        "/publishers/team-a/nodes/x-pack/versions",
        publishBody(other, "x-pack", "1.0.0"),
        400,
        { message: "Invalid personal access token" },
      ],
      ["/publishers/team-a/nodes/x-pack/versions", { node: {} }, 400, { message: "Invalid personal access token" }],
      // 6: a node id the registry refuses
      [
        "/publishers/team-a/nodes/-bad-/versions",
        publishBody(token, "-bad-", "1.0.0"),
        400,
        { message: "Failed to create node", error: expect.stringContaining("1-100 characters") },
      ],
      // 7: the version exists (1.0 is 1.0.0)
      [
        "/publishers/team-a/nodes/team-nodes/versions",
        publishBody(token, "team-nodes", "1.0"),
        400,
        { message: "The node version already exists" },
      ],
    ];
    for (const [path, body, status, answer] of cases) {
      const res = await post(path, body);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status, body: answer });
    }
  });

  it("refuses banned publishers and nodes first, with 'Node Banned'", async () => {
    expect((await publish(h.app, token, "team-nodes", "1.0.0")).status).toBe(200);
    const db = h.packs.repo as unknown as { db: { run(sql: string, p: unknown[]): Promise<number> } };
    await db.db.run("UPDATE private_nodes SET status = ? WHERE key = ?", ["NodeStatusBanned", "team-nodes"]);
    expect((await post("/publishers/team-a/nodes/team-nodes/versions", publishBody(token, "team-nodes", "2.0.0"))).body).toEqual({
      message: "Node Banned",
    });
    await db.db.run("UPDATE private_publishers SET status = ? WHERE key = ?", ["PublisherStatusBanned", "team-a"]);
    const res = await post("/publishers/team-a/nodes/other/versions", publishBody("wrong", "other", "1.0.0"));
    expect([res.status, res.body]).toEqual([403, { message: "Node Banned" }]);
  });

  it("refuses a node id that differs from the body's, a mirrored node id in any case, and a version that is not semver", async () => {
    const mismatch = await post("/publishers/team-a/nodes/team-nodes/versions", publishBody(token, "other-nodes", "1.0.0"));
    expect([mismatch.status, mismatch.body.message]).toEqual([
      400,
      `node.id "other-nodes" in the body differs from 'team-nodes' in the path`,
    ]);
    const mirrored = await post(
      "/publishers/team-a/nodes/ComfyUI-Impact-Pack/versions",
      publishBody(token, "ComfyUI-Impact-Pack", "1.0.0"),
    );
    expect(mirrored.status).toBe(400);
    expect(mirrored.body.error).toContain("taken by the mirrored registry");
    const notSemver = await post("/publishers/team-a/nodes/team-nodes/versions", publishBody(token, "team-nodes", "one"));
    expect([notSemver.status, notSemver.body.message]).toEqual([400, "Failed to create node version"]);
  });
});

describe("PUT <signedUrl>", () => {
  it("stores the archive, makes the version real with the classes read from it, and answers 200", async () => {
    const res = await publish(h.app, token, "team-nodes", "1.0.0");
    expect(res.status).toBe(200);
    const stored = await h.packs.repo.version("team-nodes", "1.0.0");
    expect(stored).toMatchObject({ status: "NodeVersionStatusActive", classes: ["TeamBlur", "TeamSharpen"], archiveSize: PACK_ZIP.length });
    const back = await h.blobs.read(stored!.archiveHash);
    const chunks: Buffer[] = [];
    for await (const c of back) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(PACK_ZIP)).toBe(true);
  });

  it("takes a URL once, and refuses an expired one or one used on another path", async () => {
    const started = await post("/publishers/team-a/nodes/team-nodes/versions", publishBody(token, "team-nodes", "1.0.0"));
    const url = pathOf(started.body.signedUrl);
    expect((await request(h.app).put(url.replace("1.0.0", "9.9.9")).send(PACK_ZIP)).status).toBe(403);
    // The grant was spent by the refused PUT too: a URL is one attempt.
    const reused = await request(h.app).put(url).send(PACK_ZIP);
    expect([reused.status, reused.body.message]).toEqual([
      403,
      "the upload URL is unknown or was already used; run the publish again for a new one",
    ]);
    const secret = "cru_expired-secret";
    await h.packs.repo.addGrant({
      digest: digestOf(secret),
      publisherId: "team-a",
      nodeId: "team-nodes",
      version: "1.0.0",
      request: { node: {}, node_version: { id: "x" } },
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    const expired = await request(h.app)
      .put(`/publishers/team-a/nodes/team-nodes/versions/1.0.0/node.zip?signature=${secret}`)
      .send(PACK_ZIP);
    expect([expired.status, expired.body.message]).toEqual([403, "the upload URL has expired; run the publish again for a new one"]);
    expect(await h.packs.repo.version("team-nodes", "1.0.0")).toBeNull();
  });
});
