/**
 * The model folders of a ComfyUI install (`folder_paths.folder_names_and_paths`, master
 * 2026: those holding model files), which `model_type:<category>` may name on an upload of
 * new bytes. `configs` (YAML) and `custom_nodes` (code) are registered folders but no model
 * folders, and an unknown category has no loader: ComfyUI refuses both (400 INVALID_BODY).
 * The legacy names (`unet`, `clip`, `t2i_adapter`) are still folders there.
 */
export const MODEL_FOLDERS: ReadonlySet<string> = new Set([
  "checkpoints",
  "loras",
  "vae",
  "text_encoders",
  "clip",
  "diffusion_models",
  "unet",
  "clip_vision",
  "style_models",
  "embeddings",
  "diffusers",
  "vae_approx",
  "controlnet",
  "t2i_adapter",
  "gligen",
  "upscale_models",
  "latent_upscale_models",
  "hypernetworks",
  "photomaker",
  "classifiers",
  "model_patches",
  "audio_encoders",
]);
