import type { CatalogRecord } from "@app/contracts";

/**
 * A hand-made catalog for the browser tests: a few real-looking packs the cases search for,
 * and 24 numbered fillers whose platforms differ, so the OS filter changes the total and
 * the list runs to several pages at 10 a page.
 */
const fillerOs = (i: number): string[] =>
  i % 3 === 0 ? ["MacOS"] : i % 3 === 1 ? ["Microsoft :: Windows"] : ["POSIX :: Linux", "Microsoft :: Windows"];

/** Impact Pack's three classes the tests search for, then 197 more, as many as the real pack has. */
export const IMPACT_CLASSES = [
  "FaceDetailer",
  "SAMLoader",
  "DetailerForEach",
  ...Array.from({ length: 197 }, (_, i) => `ImpactNode${String(i + 1).padStart(3, "0")}`),
];

// Versions' archives live at an upstream that refuses at once (the discard port): the tests use
// no network, and this instance holds none of them, which the node page must say.
const IMPACT_LATEST = {
  version: "8.8.1",
  changelog: "Faster SAM loading",
  createdAt: "2025-06-01T00:00:00Z",
  dependencies: ["ultralytics", "segment-anything"],
  status: "NodeVersionStatusActive" as const,
  downloadUrl: "http://127.0.0.1:9/ltdrdata/comfyui-impact-pack/8.8.1/node.zip",
};

export const WEB_CATALOG: CatalogRecord[] = [
  {
    id: "comfyui-impact-pack",
    name: "ComfyUI Impact Pack",
    description:
      "This node pack offers various detector nodes and detailer nodes that allow you to configure a workflow that automatically enhances facial details.",
    author: "Dr.Lt.Data",
    repository: "https://github.com/ltdrdata/ComfyUI-Impact-Pack",
    repo_stars: 3262,
    downloads: 181234,
    // As the registry stores pyproject.toml's `license = {file = ...}`: JSON text.
    license: '{"file": "LICENSE.txt"}',
    rating: 0,
    tags: ["detailer", "segmentation"],
    status: "NodeStatusActive",
    created_at: "2024-02-01T10:00:00Z",
    publisher: { id: "ltdrdata", name: "Dr.Lt.Data" },
    latest_version: IMPACT_LATEST,
    // Newest first, as a mirror stores them: the newest is banned, so installs take 8.8.1.
    versions: [
      {
        version: "8.9.0",
        createdAt: "2025-07-01T00:00:00Z",
        status: "NodeVersionStatusBanned",
        status_reason: "malicious code",
        downloadUrl: "http://127.0.0.1:9/ltdrdata/comfyui-impact-pack/8.9.0/node.zip",
      },
      IMPACT_LATEST,
      {
        version: "8.8.0",
        createdAt: "2025-05-01T00:00:00Z",
        status: "NodeVersionStatusPending",
        downloadUrl: "http://127.0.0.1:9/ltdrdata/comfyui-impact-pack/8.8.0/node.zip",
      },
      {
        version: "8.7.0",
        createdAt: "2025-04-01T00:00:00Z",
        status: "NodeVersionStatusActive",
        deprecated: true,
        downloadUrl: "http://127.0.0.1:9/ltdrdata/comfyui-impact-pack/8.7.0/node.zip",
      },
    ],
    supported_os: ["Microsoft :: Windows", "POSIX :: Linux"],
    supported_accelerators: ["GPU :: NVIDIA CUDA"],
    // A large pack: the real one has about 200 classes, and its versions must still be on the first screen.
    app_node_names: IMPACT_CLASSES,
    // Whole definitions for two of them, as a mirror keeps them (the registry's JSON text).
    app_nodes: [
      {
        comfy_node_name: "FaceDetailer",
        category: "ImpactPack/Simple",
        description: "Detects faces and redraws them at a higher resolution.",
        input_types: JSON.stringify({
          required: { image: ["IMAGE"], model: ["MODEL"], guide_size: ["FLOAT", { default: 512, min: 64, max: 8192 }] },
          optional: { detailer_hook: ["DETAILER_HOOK"] },
        }),
        return_types: JSON.stringify(["IMAGE", "IMAGE", "MASK"]),
        return_names: JSON.stringify(["image", "cropped_refined", "mask"]),
        output_is_list: [false, true, false],
        function: "doit",
      },
      {
        comfy_node_name: "SAMLoader",
        category: "ImpactPack",
        input_types: JSON.stringify({ required: { model_name: [["sam_vit_b.pth", "sam_vit_l.pth"]] } }),
        return_types: JSON.stringify(["SAM_MODEL"]),
        return_names: JSON.stringify(["SAM_MODEL"]),
        output_is_list: [false],
        function: "load_model",
      },
    ],
  },
  {
    id: "comfyui_controlnet_aux",
    name: "ComfyUI's ControlNet Auxiliary Preprocessors",
    // Written as ComfyUI-Manager's list writes links, with raw HTML that must stay text.
    description:
      "Plug-and-play ComfyUI node sets for making ControlNet hint images. See [a/the preprocessors](https://github.com/Fannovel16/comfyui_controlnet_aux#readme) and <b>not</b> [this](javascript:alert(1)).",
    author: "Fannovel16",
    repository: "https://github.com/Fannovel16/comfyui_controlnet_aux",
    repo_stars: 2900,
    downloads: 150000,
    status: "NodeStatusActive",
    publisher: { id: "fannovel16", name: "Fannovel16" },
    latest_version: { version: "1.0.7" },
    app_node_names: ["CannyEdgePreprocessor", "DepthAnythingPreprocessor"],
  },
  {
    id: "comfyui-advanced-controlnet",
    name: "ComfyUI-Advanced-ControlNet",
    description: "Nodes for scheduling ControlNet strength across timesteps and batched latents.",
    author: "Kosinkadink",
    repository: "https://github.com/Kosinkadink/ComfyUI-Advanced-ControlNet",
    repo_stars: 800,
    downloads: 90000,
    status: "NodeStatusActive",
    publisher: { id: "kosinkadink", name: "Kosinkadink" },
    latest_version: { version: "1.5.4" },
    supported_os: ["MacOS", "Microsoft :: Windows"],
    app_node_names: ["ControlNetLoaderAdvanced"],
  },
  {
    id: "banned-pack",
    name: "Banned Sampler Pack",
    description: "A sampler pack that was banned.",
    status: "NodeStatusBanned",
    status_detail: "malicious code",
    repo_stars: 5,
    publisher: { id: "someone", name: "Someone" },
    latest_version: { version: "0.3.0", status: "NodeVersionStatusBanned" },
    versions: [
      {
        version: "0.3.0",
        createdAt: "2025-03-01T00:00:00Z",
        status: "NodeVersionStatusBanned",
        status_reason: "malicious code",
        downloadUrl: "http://127.0.0.1:9/someone/banned-pack/0.3.0/node.zip",
      },
    ],
  },
  {
    // Every version deleted: nothing installs, whatever the list's latest_version says.
    id: "deleted-only-pack",
    name: "Deleted Versions Pack",
    description: "A pack whose every version was deleted by its publisher.",
    status: "NodeStatusActive",
    publisher: { id: "someone", name: "Someone" },
    latest_version: { version: "1.0.2", status: "NodeVersionStatusDeleted", createdAt: "2025-02-03T00:00:00Z" },
    versions: [
      {
        version: "1.0.2",
        createdAt: "2025-02-03T00:00:00Z",
        status: "NodeVersionStatusDeleted",
        downloadUrl: "http://127.0.0.1:9/someone/deleted-only-pack/1.0.2/node.zip",
      },
      {
        version: "1.0.1",
        createdAt: "2025-01-20T00:00:00Z",
        status: "NodeVersionStatusDeleted",
        downloadUrl: "http://127.0.0.1:9/someone/deleted-only-pack/1.0.1/node.zip",
      },
    ],
    app_node_names: ["DeletedNode"],
  },
  ...Array.from({ length: 24 }, (_, i): CatalogRecord => ({
    id: `example-pack-${String(i + 1).padStart(2, "0")}`,
    name: `Example Pack ${i + 1}`,
    description: `Sampler utilities, number ${i + 1}.`,
    author: "examples",
    repository: `https://github.com/examples/example-pack-${i + 1}`,
    repo_stars: 100 - i,
    downloads: 1000 - i * 10,
    status: "NodeStatusActive",
    publisher: { id: "examples", name: "Examples" },
    latest_version: { version: `0.${i + 1}.0` },
    supported_os: fillerOs(i),
    app_node_names: [`ExampleNode${i + 1}`],
  })),
];
