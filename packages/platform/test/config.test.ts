import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/index.ts";

describe("loadConfig", () => {
  it("defaults every variable, and an empty string counts as unset", () => {
    const c = loadConfig({ PORT: "" });
    expect(c).toMatchObject({ PORT: 8080, DATA_DIR: "./.data", HEAP_GROWTH_PERCENT: 200, LOG_LEVEL: "info" });
  });

  it("HEAP_GROWTH_PERCENT takes 0 (V8's own policy) and refuses what is not a whole number ≥ 0", () => {
    expect(loadConfig({ HEAP_GROWTH_PERCENT: "0" }).HEAP_GROWTH_PERCENT).toBe(0);
    for (const bad of ["-1", "1.5", "lots"]) {
      expect(() => loadConfig({ HEAP_GROWTH_PERCENT: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ HEAP_GROWTH_PERCENT: bad })).toThrow(/HEAP_GROWTH_PERCENT/);
    }
  });

  it("names every bad variable at once", () => {
    expect(() => loadConfig({ PORT: "x", LOG_LEVEL: "loud" })).toThrow(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/);
  });
});
