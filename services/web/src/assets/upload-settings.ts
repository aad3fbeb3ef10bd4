/** Where new bytes go, as ComfyUI's asset API files them: exactly one of these tags. */
export const DESTINATIONS = ["input", "output", "models"] as const;
export type Destination = (typeof DESTINATIONS)[number];

/** ComfyUI's model folders (folder_paths.py), offered for `model_type:`; any other name may be typed. */
export const MODEL_TYPES = [
  "checkpoints",
  "loras",
  "vae",
  "controlnet",
  "clip",
  "clip_vision",
  "text_encoders",
  "diffusion_models",
  "unet",
  "embeddings",
  "upscale_models",
  "style_models",
  "gligen",
  "hypernetworks",
  "photomaker",
] as const;

export interface UploadChoice {
  destination: Destination;
  modelType: string;
  /** Further tags, comma-separated as typed. */
  extraTags: string;
  name: string;
  subfolder: string;
}

const MODEL_FILE = /\.(safetensors|ckpt|pt|pth|bin|gguf|sft)$/i;

/** The settings a chosen file starts with: a weights file goes to models (checkpoints), anything else to input. */
export function suggestChoice(fileName: string, previous?: UploadChoice): UploadChoice {
  const model = MODEL_FILE.test(fileName);
  return {
    destination: model ? "models" : previous?.destination === "models" ? "input" : (previous?.destination ?? "input"),
    modelType: previous?.modelType || "checkpoints",
    extraTags: previous?.extraTags ?? "",
    name: fileName,
    subfolder: previous?.subfolder ?? "",
  };
}

/** The tags the asset API is sent: the destination, `model_type:<x>` for models, then the extra ones (deduplicated). */
export function tagsOf(c: UploadChoice): string[] {
  const tags: string[] = [c.destination];
  if (c.destination === "models") tags.push(`model_type:${c.modelType.trim() || "checkpoints"}`);
  for (const t of c.extraTags.split(",")) {
    const tag = t.trim();
    if (tag && !tags.includes(tag)) tags.push(tag);
  }
  return tags;
}
