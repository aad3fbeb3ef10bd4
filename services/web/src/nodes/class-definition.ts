import type { ComfyNode } from "@app/contracts";

/**
 * One node class as the registry's comfy-nodes route answers it (contracts' ComfyNode). The lists
 * come as text: `input_types` a JSON object ({required, optional, hidden}), `return_types` and
 * `return_names` JSON arrays (older records wrote Python's repr, with single quotes). An older
 * server sends the name alone.
 */
export type ComfyNodeDefinition = ComfyNode;

export interface ClassInput {
  name: string;
  type: string;
  group: "required" | "optional" | "hidden";
  /** Default, min, max… as the class declares them, short. */
  options?: string;
}
export interface ClassOutput {
  name: string;
  type: string;
  list: boolean;
}

function parseLoose(text: string | undefined): unknown {
  if (!text?.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(
        text
          .replace(/'/g, '"')
          .replace(/\bTrue\b/g, "true")
          .replace(/\bFalse\b/g, "false")
          .replace(/\bNone\b/g, "null"),
      );
    } catch {
      return undefined;
    }
  }
}

const typeText = (spec: unknown): string => {
  if (Array.isArray(spec)) return spec.length > 6 ? `one of ${spec.length} choices` : spec.map(String).join(" | ");
  return typeof spec === "string" ? spec : JSON.stringify(spec);
};

/** The inputs, or null when `input_types` is absent or unreadable. */
export function classInputs(def: ComfyNodeDefinition): ClassInput[] | null {
  const parsed = parseLoose(def.input_types);
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const out: ClassInput[] = [];
  for (const group of ["required", "optional", "hidden"] as const) {
    const inputs = (parsed as Record<string, unknown>)[group];
    if (!inputs || typeof inputs !== "object") continue;
    for (const [name, spec] of Object.entries(inputs as Record<string, unknown>)) {
      const [type, opts] = (Array.isArray(spec) ? spec : [spec]) as unknown[];
      const options = opts && typeof opts === "object" ? JSON.stringify(opts).slice(0, 120) : undefined;
      out.push({ name, type: typeText(type), group, options: options === "{}" ? undefined : options });
    }
  }
  return out;
}

/** The outputs, or null when `return_types` is absent or unreadable. */
export function classOutputs(def: ComfyNodeDefinition): ClassOutput[] | null {
  const types = parseLoose(def.return_types);
  if (!Array.isArray(types)) return null;
  const names = parseLoose(def.return_names);
  return types.map((t, i) => ({
    type: typeText(t),
    name: Array.isArray(names) && typeof names[i] === "string" ? names[i] : typeText(t),
    list: def.output_is_list?.[i] === true,
  }));
}
