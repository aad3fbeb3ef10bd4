import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredNode } from "../../src/domain/catalog-record.ts";
import { FIXTURES } from "../helpers.ts";
import { privateHarness, type PrivateHarness } from "./harness.ts";
import { PACK_ZIP, publish, publisherWithToken } from "./publish-flow.ts";

let h: PrivateHarness;
let token: string;
beforeEach(async () => {
  h = await privateHarness(FIXTURES);
  token = await publisherWithToken(h.app);
  expect((await publish(h.app, token, "team-nodes", "1.0.0")).status).toBe(200);
  expect((await publish(h.app, token, "team-nodes", "1.10.0")).status).toBe(200);
  expect((await publish(h.app, token, "team-nodes", "1.9.0")).status).toBe(200);
});
afterEach(() => h.close());

const host = { host: "registry.internal:8080" };
const ARCHIVE = (v: string) => `http://registry.internal:8080/archives/team-nodes/${v}/node.zip`;

describe("a private pack on the read routes", () => {
  it("is found by search and by class name, tagged private, with its publisher", async () => {
    const found = await request(h.app).get("/nodes/search?search=team%20nodes").set(host);
    expect(found.body.nodes[0]).toMatchObject({ id: "team-nodes", tags: ["private"], publisher: { id: "team-a" } });
    const byClass = await request(h.app).get("/nodes/search?app_node_search=TeamSharpen").set(host);
    expect(byClass.body.nodes.map((n: StoredNode) => n.id)).toEqual(["team-nodes"]);
    const list = await request(h.app).get("/nodes?node_id=team-nodes&node_id=comfyui-impact-pack").set(host);
    expect(list.body.nodes.map((n: StoredNode) => n.id).sort()).toEqual(["comfyui-impact-pack", "team-nodes"]);
  });

  it("installs its highest version by SemVer (1.10.0, not 1.9.0), from this instance", async () => {
    const node = await request(h.app).get("/nodes/team-nodes").set(host);
    expect(node.body.latest_version).toMatchObject({ version: "1.10.0", downloadUrl: ARCHIVE("1.10.0") });
    const install = await request(h.app).get("/nodes/team-nodes/install").set(host);
    expect(install.body).toMatchObject({ version: "1.10.0", downloadUrl: ARCHIVE("1.10.0") });
    const named = await request(h.app).get("/nodes/team-nodes/install?version=1.0.0").set(host);
    expect(named.body.downloadUrl).toBe(ARCHIVE("1.0.0"));
    const versions = await request(h.app).get("/nodes/team-nodes/versions").set(host);
    expect(versions.body.map((v: { version: string }) => v.version).sort()).toEqual(["1.0.0", "1.10.0", "1.9.0"]);
    expect((await request(h.app).get("/nodes/team-nodes/versions/1.9.0").set(host)).body.downloadUrl).toBe(ARCHIVE("1.9.0"));
    const bulk = await request(h.app)
      .post("/bulk/nodes/versions")
      .set(host)
      .send({ node_versions: [{ node_id: "team-nodes", version: "1.0.0" }] });
    expect(bulk.body.node_versions[0]).toMatchObject({ status: "success", node_version: { downloadUrl: ARCHIVE("1.0.0") } });
  });

  it("serves its archive byte for byte, with Repr-Digest", async () => {
    const res = await request(h.app)
      .get("/archives/team-nodes/1.0.0/node.zip")
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on("data", (c: Buffer) => chunks.push(c));
        r.on("end", () => cb(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/zip");
    expect((res.body as Buffer).equals(PACK_ZIP)).toBe(true);
    expect(res.headers["repr-digest"]).toMatch(/^sha-256=:[A-Za-z0-9+/]+=*:$/);
  });

  it("is listed under its publisher", async () => {
    expect((await request(h.app).get("/publishers/team-a").set(host)).body).toMatchObject({ id: "team-a" });
    expect((await request(h.app).get("/publishers/team-a/nodes").set(host)).body.map((n: StoredNode) => n.id)).toEqual(["team-nodes"]);
  });

  it("survives a mirror refresh, and hides a mirrored pack that later takes its id", async () => {
    const upstream: StoredNode = {
      ...FIXTURES[0]!,
      id: "Team-Nodes",
      name: "Someone else's",
      publisher: { id: "stranger", name: "Stranger" },
    };
    await h.engine.replaceAll([...FIXTURES, upstream]);
    const node = await request(h.app).get("/nodes/team-nodes").set(host);
    expect(node.body).toMatchObject({ id: "team-nodes", publisher: { id: "team-a" }, latest_version: { downloadUrl: ARCHIVE("1.10.0") } });
    const search = await request(h.app).get("/nodes/search?search=someone%20else").set(host);
    expect(search.body.nodes.map((n: StoredNode) => n.id)).not.toContain("Team-Nodes");
    expect(h.engine.status()).toEqual({ privatePacks: 1, hiddenMirrorPacks: ["Team-Nodes"] });
    // And a later publish under a mirrored id is refused.
    const taken = await request(h.app)
      .post("/publishers/team-a/nodes/comfyui-impact-pack/versions")
      .send({ personal_access_token: token, node: { id: "comfyui-impact-pack" }, node_version: { version: "1.0.0" } });
    expect(taken.status).toBe(400);
  });

  it("is in ComfyUI-Manager's channel files, its classes in the extension map", async () => {
    const list = await request(h.app).get("/channel/custom-node-list.json");
    expect(JSON.stringify(list.body)).toContain("team-nodes");
    const map = await request(h.app).get("/channel/extension-node-map.json");
    expect(JSON.stringify(map.body)).toContain("TeamSharpen");
  });
});
