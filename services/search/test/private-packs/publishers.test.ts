import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FIXTURES } from "../helpers.ts";
import { privateHarness, type PrivateHarness } from "./harness.ts";

let h: PrivateHarness;
beforeEach(async () => {
  h = await privateHarness(FIXTURES);
});
afterEach(() => h.close());

const asAlice = { "X-API-Key": "alice-key" };
const asBob = { "X-API-Key": "bob-key" };

describe("POST /publishers", () => {
  it("makes a publisher owned by the key's principal", async () => {
    const res = await request(h.app).post("/publishers").set(asAlice).send({ id: "team-a", name: "Team A" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: "team-a",
      name: "Team A",
      status: "PublisherStatusActive",
      members: [{ role: "owner", user: { id: "alice" } }],
    });
  });

  it("refuses no key, an unknown key, a bad id, a taken id and a mirrored publisher's id", async () => {
    expect((await request(h.app).post("/publishers").send({ id: "team-a" })).status).toBe(401);
    expect((await request(h.app).post("/publishers").set({ "X-API-Key": "nope" }).send({ id: "team-a" })).status).toBe(401);
    for (const id of ["Team-A", "1team", "team_a", "", 7]) {
      const res = await request(h.app).post("/publishers").set(asAlice).send({ id });
      expect(res.status, String(id)).toBe(400);
      expect(res.body.message).toContain("^[a-z][a-z0-9-]*$");
    }
    expect((await request(h.app).post("/publishers").set(asAlice).send({ id: "team-a" })).status).toBe(201);
    const again = await request(h.app).post("/publishers").set(asBob).send({ id: "team-a" });
    expect(again.status).toBe(400);
    expect(again.body.message).toContain("already exists");
    // FIXTURES' pack comfyui-impact-pack is published upstream by 'ltdrdata'.
    const mirrored = await request(h.app).post("/publishers").set(asAlice).send({ id: "ltdrdata" });
    expect(mirrored.status).toBe(400);
    expect(mirrored.body.message).toContain("taken by the mirrored registry");
  });

  it("answers a body that is not JSON with 400", async () => {
    const res = await request(h.app).post("/publishers").set(asAlice).set("content-type", "application/json").send("{nope");
    expect(res.status).toBe(400);
  });
});

describe("publishing tokens", () => {
  beforeEach(async () => {
    await request(h.app).post("/publishers").set(asAlice).send({ id: "team-a" }).expect(201);
  });

  it("shows a token once, lists it masked, keeps only its digest, and revokes it", async () => {
    const made = await request(h.app).post("/publishers/team-a/tokens").set(asAlice).send({ name: "ci", description: "the CI's" });
    expect(made.status).toBe(201);
    const token: string = made.body.token;
    expect(token).toMatch(/^crp_[A-Za-z0-9_-]{43}$/);
    const listed = await request(h.app).get("/publishers/team-a/tokens").set(asAlice);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      { id: expect.any(String), name: "ci", description: "the CI's", token: `crp_…${token.slice(-4)}`, createdAt: expect.any(String) },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(token.slice(4, 20));
    expect(await h.packs.repo.tokenDigests("team-a")).not.toContain(token);
    const gone = await request(h.app).delete(`/publishers/team-a/tokens/${listed.body[0].id}`).set(asAlice);
    expect(gone.status).toBe(204);
    expect((await request(h.app).get("/publishers/team-a/tokens").set(asAlice)).body).toEqual([]);
    expect((await request(h.app).delete(`/publishers/team-a/tokens/${listed.body[0].id}`).set(asAlice)).status).toBe(404);
  });

  it("lets no other principal's key see or manage them", async () => {
    const made = await request(h.app).post("/publishers/team-a/tokens").set(asAlice).send({ name: "ci" });
    const id = (await request(h.app).get("/publishers/team-a/tokens").set(asAlice)).body[0].id;
    expect((await request(h.app).post("/publishers/team-a/tokens").set(asBob).send({ name: "x" })).status).toBe(404);
    expect((await request(h.app).get("/publishers/team-a/tokens").set(asBob)).status).toBe(404);
    expect((await request(h.app).delete(`/publishers/team-a/tokens/${id}`).set(asBob)).status).toBe(404);
    expect((await request(h.app).get("/publishers/team-a/tokens")).status).toBe(401);
    expect(made.status).toBe(201);
    expect((await request(h.app).get("/publishers/team-a/tokens").set(asAlice)).body).toHaveLength(1);
  });
});
