import { beforeEach, describe, expect, it } from "vitest";
import type { PrivateNodeRow, PrivatePackRepository, PrivateVersionRow } from "../../src/private-packs/store/private-pack-repository.ts";

/** What every PrivatePackRepository does, run against SQLite and PostgreSQL. `fresh` opens an empty one. */
export function privatePackRepositoryConformance(name: string, fresh: () => Promise<PrivatePackRepository>): void {
  describe(`PrivatePackRepository conformance: ${name}`, () => {
    let repo: PrivatePackRepository;
    beforeEach(async () => {
      repo = await fresh();
    });

    const publisher = (id: string, owner = "alice") => ({
      id,
      name: `${id} name`,
      owner,
      status: "PublisherStatusActive",
      createdAt: "2026-01-01T00:00:00.000Z",
    });
    const node = (id: string, publisherId: string): PrivateNodeRow => ({
      id,
      publisherId,
      status: "NodeStatusActive",
      fields: { name: id, description: "d" },
      createdAt: "2026-01-02T00:00:00.000Z",
      updatedAt: "2026-01-02T00:00:00.000Z",
    });
    const version = (nodeId: string, v: string, createdAt = "2026-01-02T00:00:00.000Z"): PrivateVersionRow => ({
      nodeId,
      version: v,
      id: `${nodeId}@${v}`,
      status: "NodeVersionStatusActive",
      statusReason: "",
      deprecated: false,
      fields: { dependencies: ["numpy"], changelog: "c" },
      archiveHash: "ab".repeat(32),
      archiveSize: 123,
      classes: ["MyNode"],
      createdAt,
    });

    it("creates a publisher once, whatever the case of a second id", async () => {
      expect(await repo.createPublisher(publisher("team-a"))).toBe(true);
      expect(await repo.createPublisher({ ...publisher("team-a"), owner: "bob" })).toBe(false);
      expect(await repo.createPublisher(publisher("TEAM-A"))).toBe(false);
      expect(await repo.publisher("Team-A")).toEqual(publisher("team-a"));
      expect(await repo.publisher("team-b")).toBeNull();
    });

    it("keeps tokens as digests, lists them without, revokes one", async () => {
      await repo.createPublisher(publisher("team-a"));
      await repo.createPublisher(publisher("team-b"));
      const t = { publisherId: "team-a", name: "ci", description: "d", hint: "crp_…abcd", createdAt: "2026-01-01T00:00:00.000Z" };
      await repo.addToken({ ...t, id: "t1", digest: "11".repeat(32) });
      await repo.addToken({ ...t, id: "t2", digest: "22".repeat(32) });
      expect(await repo.tokenDigests("team-a")).toEqual(expect.arrayContaining(["11".repeat(32), "22".repeat(32)]));
      expect(await repo.tokenDigests("team-b")).toEqual([]);
      expect((await repo.tokens("team-a")).map((x) => x.id)).toEqual(["t1", "t2"]);
      expect(JSON.stringify(await repo.tokens("team-a"))).not.toContain("11".repeat(32));
      expect(await repo.revokeToken("team-b", "t1")).toBe(false);
      expect(await repo.revokeToken("team-a", "t1")).toBe(true);
      expect(await repo.tokenDigests("team-a")).toEqual(["22".repeat(32)]);
    });

    it("hands a grant out once", async () => {
      const grant = {
        digest: "33".repeat(32),
        publisherId: "team-a",
        nodeId: "pack",
        version: "1.0.0",
        request: { node: { id: "pack" }, node_version: { version: "1.0.0" } },
        expiresAt: "2026-01-01T00:05:00.000Z",
      };
      await repo.addGrant(grant);
      expect(await repo.takeGrant(grant.digest)).toEqual(grant);
      expect(await repo.takeGrant(grant.digest)).toBeNull();
    });

    it("publishes versions of a node its publisher owns, and refuses another publisher and a repeated version", async () => {
      await repo.createPublisher(publisher("team-a"));
      await repo.createPublisher(publisher("team-b"));
      expect(await repo.publish(node("my-pack", "team-a"), version("my-pack", "1.0.0"))).toBe("published");
      expect(await repo.publish(node("my-pack", "team-a"), version("my-pack", "1.0.0"))).toBe("version-exists");
      expect(await repo.publish(node("My-Pack", "team-b"), version("My-Pack", "2.0.0"))).toBe("node-taken");
      expect(
        await repo.publish(
          { ...node("my-pack", "team-a"), fields: { name: "renamed" } },
          version("my-pack", "1.1.0", "2026-01-03T00:00:00.000Z"),
        ),
      ).toBe("published");
      expect(await repo.node("MY-PACK")).toMatchObject({ id: "my-pack", publisherId: "team-a", fields: { name: "renamed" } });
      expect((await repo.versions("my-pack")).map((v) => v.version)).toEqual(["1.0.0", "1.1.0"]);
      expect(await repo.version("my-pack", "1.0.0")).toEqual(version("my-pack", "1.0.0"));
      expect((await repo.nodes()).map((n) => n.id)).toEqual(["my-pack"]);
    });

    it("sets a version's status and deprecation, and deletes it, each a new revision", async () => {
      await repo.createPublisher(publisher("team-a"));
      const before = await repo.revision();
      await repo.publish(node("my-pack", "team-a"), version("my-pack", "1.0.0"));
      const published = await repo.revision();
      expect(published).not.toBe(before);
      expect(await repo.setVersionStatus("my-pack", "1.0.0", "NodeVersionStatusFlagged", "scan: found")).toBe(true);
      expect(await repo.setDeprecated("my-pack", "1.0.0", true)).toBe(true);
      expect(await repo.revision()).not.toBe(published);
      expect(await repo.version("my-pack", "1.0.0")).toMatchObject({
        status: "NodeVersionStatusFlagged",
        statusReason: "scan: found",
        deprecated: true,
      });
      expect(await repo.setVersionStatus("my-pack", "9.0.0", "x", "")).toBe(false);
      expect((await repo.deleteVersion("my-pack", "1.0.0"))?.version).toBe("1.0.0");
      expect(await repo.deleteVersion("my-pack", "1.0.0")).toBeNull();
      expect(await repo.versions("my-pack")).toEqual([]);
    });
  });
}
