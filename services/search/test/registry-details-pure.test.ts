import { describe, expect, it } from "vitest";
import type { NodeVersion } from "@app/contracts";
import { toMeiliDocument } from "../src/adapters/meilisearch/documents.ts";
import { detailsStale, withDetails } from "../src/adapters/registry/pack-details.ts";
import { installPathVersion } from "../src/domain/versions.ts";

const v = (version: string, status: NodeVersion["status"], createdAt: string): NodeVersion => ({
  version,
  status,
  createdAt,
  downloadUrl: `https://cdn.example/${version}.zip`,
});
const VERSIONS = [
  v("2.0.0", "NodeVersionStatusBanned", "2024-06-01T00:00:00Z"),
  v("1.9.0", "NodeVersionStatusActive", "2024-05-01T00:00:00Z"),
  v("1.10.0", "NodeVersionStatusFlagged", "2024-03-01T00:00:00Z"),
  v("3.0.0", "NodeVersionStatusDeleted", "2024-02-01T00:00:00Z"),
];

describe("the registry's install path", () => {
  it("takes the first active, flagged or pending version by the version text descending, not the newest one", () => {
    // registry-backend orders a text column: 1.9.0 comes before 1.10.0.
    expect(installPathVersion(VERSIONS)?.version).toBe("1.9.0");
    expect(installPathVersion([VERSIONS[2]!, v("1.2.0", "NodeVersionStatusActive", "2023-01-01T00:00:00Z")])?.version).toBe("1.2.0");
    expect(installPathVersion([v("1.0.0", "NodeVersionStatusPending", "2024-01-01T00:00:00Z")])?.version).toBe("1.0.0");
    expect(installPathVersion([VERSIONS[0]!, VERSIONS[3]!])).toBeUndefined();
  });
});

describe("a pack's details on its list entry", () => {
  const listed = { id: "p", status: "NodeStatusActive" as const, latest_version: { ...VERSIONS[0]!, downloadUrl: "" } };

  it("make the install-path version the latest_version and its classes the app node names", () => {
    const r = withDetails(listed, { versions: VERSIONS, classes: ["NineClass"] });
    expect(r.latest_version).toEqual(VERSIONS[1]);
    expect(r).toMatchObject({ app_node_names: ["NineClass"], app_node_names_version: "1.9.0", versions: VERSIONS });
  });

  it("leave a pack with no installable version its list entry's latest_version and no classes", () => {
    const r = withDetails(listed, { versions: [VERSIONS[0]!] });
    expect(r.latest_version).toEqual(listed.latest_version);
    expect(r.app_node_names).toBeUndefined();
  });

  it("are stale when the list's newest version differs from the newest known", () => {
    const known = withDetails(listed, { versions: VERSIONS, classes: [] });
    expect(detailsStale(listed, known)).toBe(false);
    expect(detailsStale({ ...listed, latest_version: { ...listed.latest_version, version: "2.1.0" } }, known)).toBe(true);
    expect(detailsStale({ ...listed, latest_version: { ...listed.latest_version, status: "NodeVersionStatusActive" } }, known)).toBe(true);
    expect(detailsStale(listed, { id: "p" })).toBe(true);
  });

  it("reach Meilisearch's documents: the install-path classes are searchable and filterable, no other version's", () => {
    const doc = toMeiliDocument(withDetails(listed, { versions: VERSIONS, classes: ["FaceDetailerNine"] }), 0);
    expect(doc.app_names_lower).toEqual(["facedetailernine"]);
    expect(doc.nodes_tags_text.split(" ")).toEqual(expect.arrayContaining(["facedetailernine", "face", "detailer"]));
    expect(doc.record.latest_version?.downloadUrl).toBe("https://cdn.example/1.9.0.zip");
  });
});
