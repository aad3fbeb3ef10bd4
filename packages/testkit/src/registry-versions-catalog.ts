import type { RegistryNode } from "./relevance-set.ts";

/**
 * A small registry-shaped catalog whose packs carry their versions, for the registry read
 * routes and the request sequences of ComfyUI-Manager, comfy-cli and the ComfyUI frontend.
 *
 * It models what the real registry does and a naive mirror gets wrong:
 * - the install-path version (`latest_version`) is not the newest by creation: a newer one is
 *   banned, an older one deprecated, one deleted, one pending;
 * - a node class several packs provide, where the preempting pack must win over a more popular
 *   one, and one where the lower `search_ranking` wins over more installs;
 * - versions out of order and one without a date (a hand-written file);
 * - an id with capitals (the registry's 302 from other capitals), a pack known by its
 *   `latest_version` alone, one with no version at all, one whose every version is deleted or
 *   banned, a banned pack and a deleted one;
 * - 30 popular fillers, so "only these `node_id`s" cannot pass for "the ten most popular".
 */

const url = (id: string, v: string) => `https://cdn.comfy.org/${id}/${v}/node.zip`;

const version = (id: string, v: string, createdAt: string, over: Record<string, unknown> = {}) => ({
  id: `${id}-${v}-uuid`,
  node_id: id,
  version: v,
  changelog: `Release ${v}`,
  createdAt,
  dependencies: ["numpy"],
  deprecated: false,
  downloadUrl: url(id, v),
  status: "NodeVersionStatusActive",
  supported_os: ["OS Independent"],
  ...over,
});

const IMPACT_VERSIONS = [
  version("comfyui-impact-pack", "8.9.0", "2025-07-01T00:00:00Z", {
    status: "NodeVersionStatusBanned",
    status_reason: "malware found in the wheel",
  }),
  version("comfyui-impact-pack", "8.8.1", "2025-06-01T00:00:00Z", { dependencies: ["ultralytics", "segment-anything"] }),
  version("comfyui-impact-pack", "8.8.0", "2025-05-01T00:00:00Z", { status: "NodeVersionStatusPending" }),
  version("comfyui-impact-pack", "8.7.0", "2025-04-01T00:00:00Z", { deprecated: true }),
  version("comfyui-impact-pack", "8.0.0", "2025-01-01T00:00:00Z", { status: "NodeVersionStatusDeleted" }),
];

export const VERSIONED_CATALOG: RegistryNode[] = [
  {
    id: "comfyui-impact-pack",
    name: "ComfyUI Impact Pack",
    description: "Detector and detailer nodes.",
    author: "Dr.Lt.Data",
    repository: "https://github.com/ltdrdata/ComfyUI-Impact-Pack",
    publisher: { id: "ltdrdata", name: "Dr.Lt.Data" },
    status: "NodeStatusActive",
    downloads: 5_000,
    search_ranking: 3,
    github_stars: 3262,
    created_at: "2023-05-03T02:35:14Z",
    tags: ["detailer"],
    latest_version: IMPACT_VERSIONS[1],
    versions: IMPACT_VERSIONS,
    app_node_names: ["FaceDetailer", "SAMLoader", "DetailerForEach"],
    app_node_names_version: "8.8.1",
    preempted_comfy_node_names: ["SAMLoader"],
  },
  {
    id: "sam-tools",
    name: "SAM Tools",
    description: "Another SAM loader, more installed than the Impact Pack.",
    publisher: { id: "someone", name: "Someone" },
    status: "NodeStatusActive",
    downloads: 90_000,
    search_ranking: 1,
    latest_version: version("sam-tools", "2.0.0", "2025-03-01T00:00:00Z"),
    // Out of order, one without a date, as a hand-written file may hold them: answered newest first, undated last.
    versions: [
      version("sam-tools", "1.0.0", "2024-03-01T00:00:00Z"),
      { version: "0.9.0", status: "NodeVersionStatusActive" },
      version("sam-tools", "2.0.0", "2025-03-01T00:00:00Z"),
    ],
    app_node_names: ["SAMLoader", "SAMDetector"],
    app_node_names_version: "2.0.0",
  },
  {
    id: "comfyui-impact-subpack",
    name: "ComfyUI Impact Subpack",
    description: "The Ultralytics detector provider.",
    publisher: { id: "ltdrdata", name: "Dr.Lt.Data" },
    status: "NodeStatusActive",
    downloads: 3_000,
    search_ranking: 2,
    latest_version: version("comfyui-impact-subpack", "1.3.2", "2025-05-10T00:00:00Z"),
    versions: [version("comfyui-impact-subpack", "1.3.2", "2025-05-10T00:00:00Z")],
    app_node_names: ["UltralyticsDetectorProvider"],
    app_node_names_version: "1.3.2",
  },
  {
    id: "ultralytics-fork",
    name: "Ultralytics Fork",
    description: "Installed more, ranked lower.",
    publisher: { id: "someone", name: "Someone" },
    status: "NodeStatusActive",
    downloads: 80_000,
    search_ranking: 9,
    latest_version: version("ultralytics-fork", "0.1.0", "2025-02-10T00:00:00Z"),
    versions: [version("ultralytics-fork", "0.1.0", "2025-02-10T00:00:00Z")],
    app_node_names: ["UltralyticsDetectorProvider"],
    app_node_names_version: "0.1.0",
  },
  {
    id: "ComfyUI-KJNodes",
    name: "KJNodes for ComfyUI",
    description: "Various quality of life nodes.",
    author: "kijai",
    publisher: { id: "kijai", name: "Kijai" },
    status: "NodeStatusActive",
    downloads: 4_000,
    latest_version: version("ComfyUI-KJNodes", "1.1.0", "2025-06-20T00:00:00Z"),
    versions: [version("ComfyUI-KJNodes", "1.1.0", "2025-06-20T00:00:00Z"), version("ComfyUI-KJNodes", "1.0.9", "2025-05-20T00:00:00Z")],
    app_node_names: ["GetNode", "SetNode"],
  },
  {
    id: "legacy-pack",
    name: "Legacy Pack",
    description: "Known by its latest version alone.",
    publisher: { id: "old-timer", name: "Old Timer" },
    status: "NodeStatusActive",
    downloads: 10,
    latest_version: {
      version: "0.9.0",
      createdAt: "2024-01-01T00:00:00Z",
      downloadUrl: url("legacy-pack", "0.9.0"),
      status: "NodeVersionStatusActive",
    },
    app_node_names: ["LegacyNode"],
  },
  {
    // Every version deleted or banned (112 of 5,892 packs in a production-like catalog): still listed,
    // but nothing installs, so the registry answers it with no latest_version and the install 404.
    id: "withdrawn-pack",
    name: "Withdrawn Pack",
    description: "Every version withdrawn.",
    repository: "https://github.com/old-timer/withdrawn-pack",
    publisher: { id: "old-timer", name: "Old Timer" },
    status: "NodeStatusActive",
    downloads: 7,
    latest_version: version("withdrawn-pack", "2.0.0", "2025-02-01T00:00:00Z", { status: "NodeVersionStatusDeleted" }),
    versions: [
      version("withdrawn-pack", "2.0.0", "2025-02-01T00:00:00Z", { status: "NodeVersionStatusDeleted" }),
      version("withdrawn-pack", "1.0.0", "2024-02-01T00:00:00Z", { status: "NodeVersionStatusBanned" }),
    ],
    app_node_names: ["WithdrawnNode"],
  },
  {
    id: "unversioned-pack",
    name: "Unversioned Pack",
    description: "No version known.",
    status: "NodeStatusActive",
    downloads: 5,
    publisher: { id: "old-timer", name: "Old Timer" },
  },
  {
    id: "banned-pack",
    name: "Banned Pack",
    description: "Banned.",
    status: "NodeStatusBanned",
    downloads: 1_000_000,
    publisher: { id: "ltdrdata", name: "Dr.Lt.Data" },
    latest_version: version("banned-pack", "1.0.0", "2025-01-01T00:00:00Z"),
    versions: [version("banned-pack", "1.0.0", "2025-01-01T00:00:00Z")],
    app_node_names: ["SAMLoader"],
  },
  {
    id: "deleted-pack",
    name: "Deleted Pack",
    description: "Deleted.",
    status: "NodeStatusDeleted",
    downloads: 2_000_000,
    app_node_names: ["SAMLoader"],
  },
  ...Array.from({ length: 30 }, (_, i): RegistryNode => {
    const id = `popular-filler-${String(i).padStart(2, "0")}`;
    return {
      id,
      name: `Popular Filler ${i}`,
      description: `Filler ${i}.`,
      status: "NodeStatusActive",
      downloads: 100_000 + i,
      publisher: { id: "filler-co", name: "Filler Co" },
      latest_version: version(id, "1.0.0", `2024-03-${String(i + 1).padStart(2, "0")}T00:00:00Z`),
      app_node_names: [`FillerNode${i}`],
    };
  }),
];

/** The packs a list serves: all but the banned and the deleted one. */
export const VERSIONED_CATALOG_LISTED = VERSIONED_CATALOG.filter((n) => n.status === "NodeStatusActive").map((n) => n.id);
