import { ApiFailure } from "./errors.ts";
import { MODEL_FOLDERS } from "./model-folders.ts";

/** Where ComfyUI files new content; exactly one must be among the tags of an upload of new bytes. */
const DESTINATIONS = ["input", "output", "models"];

/**
 * New bytes are filed by ComfyUI under their destination tag: exactly one of input, output or
 * models, and models with exactly one `model_type:<category>` naming one of its model folders
 * (MODEL_FOLDERS: not `configs` or `custom_nodes`, nor a category no loader reads). This service
 * keeps every byte in one content-addressed store, so the rule is kept for what clients rely on
 * (the tags say what the asset is for), not for a folder. Answers the model category (null for
 * input and output); 400 `INVALID_BODY` otherwise.
 */
export function destinationCategory(tags: string[]): string | null {
  const roles = tags.filter((t) => DESTINATIONS.includes(t));
  if (roles.length !== 1) {
    throw new ApiFailure(
      "invalid_body",
      `tags: new content needs exactly one destination tag (${DESTINATIONS.join(", ")}); got ${roles.length}`,
    );
  }
  const modelTypes = tags.filter((t) => t.startsWith("model_type:") && t.length > "model_type:".length);
  if (roles[0] !== "models") return null;
  if (modelTypes.length !== 1) {
    throw new ApiFailure("invalid_body", `tags: a models upload needs exactly one model_type:<category> tag; got ${modelTypes.length}`);
  }
  const category = modelTypes[0]!.slice("model_type:".length);
  if (!MODEL_FOLDERS.has(category)) {
    throw new ApiFailure(
      "invalid_body",
      `tags: model_type:${category.slice(0, 100)} is not a model folder (one of ${[...MODEL_FOLDERS].join(", ")})`,
    );
  }
  return category;
}
