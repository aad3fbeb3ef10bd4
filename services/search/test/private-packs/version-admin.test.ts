import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { privateHarness, type PrivateHarness } from "./harness.ts";
import { publish, publisherWithToken } from "./publish-flow.ts";

let h: PrivateHarness;
beforeEach(async () => {
  h = await privateHarness([], { PUBLISH_REVIEW: "on" });
  const token = await publisherWithToken(h.app);
  expect((await publish(h.app, token, "team-nodes", "1.0.0")).status).toBe(200);
});
afterEach(() => h.close());

const asAlice = { "X-API-Key": "alice-key" };
const asBob = { "X-API-Key": "bob-key" };

describe("a published version's status, deprecation and removal", () => {
  it("under review is Pending and not on the install path until its owner activates it", async () => {
    expect((await request(h.app).get("/nodes/team-nodes/install")).status).toBe(200);
    expect((await request(h.app).get("/nodes/team-nodes/versions/1.0.0")).body.status).toBe("NodeVersionStatusPending");
    const set = await request(h.app)
      .put("/admin/nodes/team-nodes/versions/1.0.0")
      .set(asAlice)
      .send({ status: "NodeVersionStatusBanned", status_reason: "not for us" });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ version: "1.0.0", status: "NodeVersionStatusBanned", status_reason: "not for us" });
    expect((await request(h.app).get("/nodes/team-nodes/install")).status).toBe(404);
    await request(h.app).put("/admin/nodes/team-nodes/versions/1.0.0").set(asAlice).send({ status: "NodeVersionStatusActive" }).expect(200);
    expect((await request(h.app).get("/nodes/team-nodes/install")).body).toMatchObject({
      version: "1.0.0",
      status: "NodeVersionStatusActive",
    });
  });

  it("refuses another principal, no key, and a status the registry does not have", async () => {
    expect(
      (await request(h.app).put("/admin/nodes/team-nodes/versions/1.0.0").set(asBob).send({ status: "NodeVersionStatusActive" })).status,
    ).toBe(404);
    expect((await request(h.app).put("/admin/nodes/team-nodes/versions/1.0.0").send({ status: "NodeVersionStatusActive" })).status).toBe(
      401,
    );
    const bad = await request(h.app).put("/admin/nodes/team-nodes/versions/1.0.0").set(asAlice).send({ status: "Approved" });
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringContaining("NodeVersionStatusActive")]);
    expect((await h.packs.repo.version("team-nodes", "1.0.0"))?.status).toBe("NodeVersionStatusPending");
  });

  it("deprecates and deletes through the registry's publisher routes", async () => {
    const dep = await request(h.app).put("/publishers/team-a/nodes/team-nodes/versions/1.0.0").set(asAlice).send({ deprecated: true });
    expect([dep.status, dep.body]).toEqual([200, { changelog: "", deprecated: true }]);
    expect((await request(h.app).get("/nodes/team-nodes/versions/1.0.0")).body.deprecated).toBe(true);
    expect((await request(h.app).delete("/publishers/team-a/nodes/team-nodes/versions/1.0.0").set(asBob)).status).toBe(404);
    expect((await request(h.app).delete("/publishers/team-a/nodes/team-nodes/versions/1.0.0").set(asAlice)).status).toBe(204);
    expect((await request(h.app).get("/nodes/team-nodes/install")).status).toBe(404);
    expect((await request(h.app).get("/nodes/team-nodes/versions/1.0.0")).body.status).toBe("NodeVersionStatusDeleted");
  });
});
