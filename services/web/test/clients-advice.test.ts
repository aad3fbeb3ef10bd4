import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REGISTRY_PATHS } from "../src/nodes/registry-paths.ts";
import { SEARCH_PATHS } from "../../search/src/routes/paths.ts";

const README = readFileSync(join(import.meta.dirname, "../../../README.md"), "utf8");

describe("which paths /ui/clients tells administrators to send to this instance", () => {
  it("are every path the search service answers, archives and the channel included", () => {
    expect([...REGISTRY_PATHS].sort()).toEqual([...SEARCH_PATHS].sort());
    expect(REGISTRY_PATHS).toEqual(expect.arrayContaining(["/archives", "/channel"]));
  });

  it("are the paths the README's 'Using it from ComfyUI tools' names", () => {
    const section = README.slice(README.indexOf("## Using it from ComfyUI tools"));
    const advice = /\*\*Which paths to send here\.\*\*([\s\S]*?)\n\n/.exec(section)?.[1];
    expect(advice, "the README's paragraph on which paths to send").toBeDefined();
    // The list runs from "to this service:" to the parenthesis that says what the paths are.
    const list = /to this service:([^(]*)\(/.exec(advice!)?.[1] ?? "";
    const named = [...list.matchAll(/`(\/[a-z/-]+)`/g)].map((m) => m[1]);
    expect(named).toEqual([...REGISTRY_PATHS]);
  });
});
