/** A node record as a registry's list carries it: any fields, an id always. */
export type GeneratedNode = Record<string, unknown> & { id: string };

/** The seed and size of the tests' generated catalog. */
export const FIXTURE_SEED = 20_240_601;
export const FIXTURE_NODES = 4000;

/** mulberry32: small, fast, and the same sequence on every machine for a seed (also the benchmarks' synthetic catalogs). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Words chosen to stay clear of the relevance set's names (impact, kj, ipadapter, manager, controlnet).
const WORDS = (
  "wave sampler latent noise prompt style lora loader video frame audio mask segment depth normal pose " +
  "upscale tile blend color grade film grain sketch paint inpaint outpaint crop resize batch switch math " +
  "string text caption tagger clip vision region area cutoff schedule sigma scheduler seed random preview " +
  "save image gallery flux sdxl cascade hunyuan wan animate motion interp tween loop vae decode encode " +
  "cache memory offload gguf quant tensor matrix vector sparse dense graph flow pipe route node tool suite " +
  "essentials extras utils helpers toolkit studio lab bridge wrapper plus pro lite mini core"
).split(" ");
const ADJ = "simple easy fast smart better super magic deep quick clean tiny advanced dynamic custom".split(" ");
const OS = ["OS Independent", "Microsoft :: Windows", "Microsoft :: Windows :: 11", "POSIX :: Linux", "MacOS", "POSIX :: Linux :: Ubuntu"];
const ACCEL = ["GPU :: NVIDIA CUDA", "GPU :: AMD ROCm", "GPU :: Apple Metal", "CPU", "CUDA", "Intel XPU"];
const VERSION_STATUS = [
  "NodeVersionStatusActive",
  "NodeVersionStatusActive",
  "NodeVersionStatusActive",
  "NodeVersionStatusPending",
  "NodeVersionStatusFlagged",
];

/**
 * A registry-shaped catalog: ids, names, descriptions, publishers with a few prolific ones,
 * stars and downloads with a long tail, latest_version with supported_os/accelerator paths,
 * app node names, and some banned or deleted packs. The same seed gives the same catalog.
 */
export function generateCatalog(opts: { seed?: number; nodes?: number } = {}): GeneratedNode[] {
  const r = seeded(opts.seed ?? FIXTURE_SEED);
  const n = opts.nodes ?? FIXTURE_NODES;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const some = <T>(xs: readonly T[], max: number): T[] => [...new Set(Array.from({ length: Math.floor(r() * (max + 1)) }, () => pick(xs)))];
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  // A Zipf-like choice of publisher: a few publish dozens of packs, most publish one.
  const publishers = Array.from({ length: Math.max(8, Math.floor(n / 5)) }, (_, i) => `${pick(WORDS)}${pick(ADJ)}${i}`);
  const publisherOf = () => publishers[Math.floor(publishers.length * r() ** 3)]!;
  const longTail = (scale: number) => Math.floor(Math.exp(r() * Math.log(scale))) - 1;
  const seen = new Set<string>();
  const out: GeneratedNode[] = [];
  for (let i = 0; out.length < n; i++) {
    const words = [pick(WORDS), pick(WORDS), ...(r() < 0.4 ? [pick(WORDS)] : [])];
    const style = r();
    const name =
      style < 0.3
        ? `ComfyUI-${words.map(cap).join("-")}`
        : style < 0.55
          ? `comfyui_${words.join("_")}`
          : style < 0.8
            ? words.map(cap).join(" ")
            : `${cap(pick(ADJ))} ${words.map(cap).join(" ")} Nodes`;
    let id = words.join("-").toLowerCase();
    if (seen.has(id)) id = `${id}-${i}`;
    seen.add(id);
    const publisher = publisherOf();
    const stars = r() < 0.02 ? undefined : longTail(20_000);
    const statusRoll = r();
    const status = statusRoll < 0.015 ? "NodeStatusBanned" : statusRoll < 0.035 ? "NodeStatusDeleted" : "NodeStatusActive";
    const created = new Date(Date.UTC(2023, 0, 1) + Math.floor(r() * 900) * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    const node: GeneratedNode = {
      id,
      name,
      description: `${cap(pick(ADJ))} ${words.join(" ")} nodes: ${pick(WORDS)} and ${pick(WORDS)} for ${pick(WORDS)} workflows.${r() < 0.3 ? `\nSee [a/the docs](https://example.com/${id}).` : ""}`,
      author: publisher,
      publisher: { id: publisher.toLowerCase(), name: publisher },
      repository: `https://github.com/${publisher}/${name.replace(/\s+/g, "-")}`,
      status,
      created_at: created,
      downloads: longTail(stars === undefined ? 1000 : Math.max(10, stars * 50)),
    };
    // The public registry's field name on some records, ours on the rest: both load.
    if (stars !== undefined) node[r() < 0.2 ? "github_stars" : "repo_stars"] = stars;
    if (r() < 0.05) node.tags = some(WORDS, 3);
    if (r() < 0.1) node.license = pick(["MIT", "GPL-3.0", "Apache-2.0", "LICENSE"]);
    if (r() < 0.02) node.preempted_comfy_node_names = [`${cap(words[0]!)}Node`];
    if (r() < 0.85) {
      const names = Array.from(
        { length: 1 + longTail(40) },
        () => `${cap(pick(WORDS))}${cap(pick(WORDS))}${pick(["", "Advanced", "Simple", "V2", "Loader", "Apply"])}`,
      );
      node.app_node_names = [...new Set(names)];
    }
    if (r() < 0.8) {
      node.latest_version = {
        id: `${id}-v${i}`,
        node_id: id,
        version: `${Math.floor(r() * 3)}.${Math.floor(r() * 20)}.${Math.floor(r() * 10)}`,
        createdAt: created,
        status: pick(VERSION_STATUS),
        comfy_node_extract_status: r() < 0.9 ? "success" : "failed",
        supported_os: r() < 0.4 ? [] : some(OS, 3),
        supported_accelerators: r() < 0.5 ? [] : some(ACCEL, 3),
        ...(r() < 0.3 && { dependencies: some(["numpy", "torch", "opencv-python", "transformers", "onnxruntime"], 3) }),
      };
    }
    out.push(node);
  }
  return out;
}
