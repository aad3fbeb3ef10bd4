import { describe, expect, it } from "vitest";
import { classInputs, classOutputs } from "../src/nodes/class-definition.ts";
import { comfyCliTarget, registryInstallCommand } from "../src/nodes/install-command.ts";
import { readLicense } from "../src/nodes/license.ts";
import { isInstallable, statusWord } from "../src/nodes/version-status.ts";
import { isPrivatePack } from "../src/nodes/private-pack.ts";

describe("the install command for this instance", () => {
  it("names the environment comfy-cli reads for each of its three registries", () => {
    expect(registryInstallCommand("http://localhost:8080", "comfyui-impact-pack")).toBe(
      "ENVIRONMENT=dev comfy node registry-install comfyui-impact-pack",
    );
    expect(registryInstallCommand("http://127.0.0.1:8080", "a", "1.2.0")).toBe(
      "ENVIRONMENT=dev comfy node registry-install a --version 1.2.0",
    );
    expect(registryInstallCommand("https://api.comfy.org", "a")).toBe("comfy node registry-install a");
    expect(registryInstallCommand("https://stagingapi.comfy.org", "a")).toBe("ENVIRONMENT=staging comfy node registry-install a");
  });

  it("for an origin comfy-cli cannot name, says how to make localhost:8080 reach it", () => {
    expect(comfyCliTarget("http://localhost:8080").direct).toBe(true);
    const far = comfyCliTarget("https://registry.example.com");
    expect(far).toEqual({
      prefix: "ENVIRONMENT=dev ",
      direct: false,
      forward: "ssh -N -L 8080:registry.example.com:443 registry.example.com",
    });
    expect(comfyCliTarget("http://127.0.0.1:43117").forward).toBe("ssh -N -L 8080:127.0.0.1:43117 127.0.0.1");
  });
});

describe("version statuses", () => {
  it("offers active, flagged and pending versions; never banned or deleted ones", () => {
    expect(
      ["NodeVersionStatusActive", "NodeVersionStatusFlagged", "NodeVersionStatusPending"].map((status) =>
        isInstallable({ status: status as never }),
      ),
    ).toEqual([true, true, true]);
    expect(isInstallable({ status: "NodeVersionStatusDeleted" })).toBe(false);
    expect(isInstallable({ status: "NodeVersionStatusBanned" })).toBe(false);
    expect(statusWord("NodeVersionStatusDeleted")).toBe("deleted");
  });
});

describe("the license", () => {
  it("shows a name as text, pyproject's {text} as its text and {file} as a link into a GitHub repository", () => {
    expect(readLicense("MIT")).toEqual({ kind: "text", text: "MIT" });
    expect(readLicense('{"text": "Apache-2.0"}')).toEqual({ kind: "text", text: "Apache-2.0" });
    expect(readLicense('{"file": "LICENSE"}', "https://github.com/ltdrdata/ComfyUI-Impact-Pack")).toEqual({
      kind: "file",
      file: "LICENSE",
      href: "https://github.com/ltdrdata/ComfyUI-Impact-Pack/blob/HEAD/LICENSE",
    });
    expect(readLicense('{"file": "LICENSE"}', "https://gitlab.com/a/b")).toEqual({ kind: "file", file: "LICENSE" });
    expect(readLicense("")).toBeNull();
    expect(readLicense("{}")).toBeNull();
  });
});

describe("a node class's definition", () => {
  it("reads input_types and the output lists as the registry sends them (JSON text, or Python's repr)", () => {
    const def = {
      comfy_node_name: "FaceDetailer",
      input_types: JSON.stringify({
        required: { image: ["IMAGE"], steps: ["INT", { default: 20, min: 1 }] },
        optional: { mask: ["MASK"] },
      }),
      return_types: "['IMAGE', 'MASK']",
      return_names: '["image", "cropped_mask"]',
      output_is_list: [false, true],
    };
    expect(classInputs(def)).toEqual([
      { name: "image", type: "IMAGE", group: "required", options: undefined },
      { name: "steps", type: "INT", group: "required", options: '{"default":20,"min":1}' },
      { name: "mask", type: "MASK", group: "optional", options: undefined },
    ]);
    expect(classOutputs(def)).toEqual([
      { name: "image", type: "IMAGE", list: false },
      { name: "cropped_mask", type: "MASK", list: true },
    ]);
  });

  it("is null where the server sent only the name, and a choice list reads as one", () => {
    expect(classInputs({ comfy_node_name: "X" })).toBeNull();
    expect(classOutputs({ comfy_node_name: "X", return_types: "not a list" })).toBeNull();
    expect(classInputs({ input_types: JSON.stringify({ required: { mode: [["a", "b", "c", "d", "e", "f", "g"]] } }) })![0]!.type).toBe(
      "one of 7 choices",
    );
  });
});

describe("a private pack's badge", () => {
  it("shows on packs the routes tag private, and on no mirrored pack", () => {
    expect(isPrivatePack({ tags: ["private"] })).toBe(true);
    expect(isPrivatePack({ tags: ["detailer"] })).toBe(false);
    expect(isPrivatePack({})).toBe(false);
  });
});
