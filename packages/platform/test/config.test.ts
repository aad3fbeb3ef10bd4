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

  it("TEMP_MAX_AGE_MS defaults to an hour, and refuses less than a minute or less than twice BODY_TIMEOUT_MS", () => {
    expect(loadConfig({}).TEMP_MAX_AGE_MS).toBe(3_600_000);
    expect(loadConfig({ TEMP_MAX_AGE_MS: "120000", BODY_TIMEOUT_MS: "60000" }).TEMP_MAX_AGE_MS).toBe(120_000);
    for (const env of [{ TEMP_MAX_AGE_MS: "59999" }, { TEMP_MAX_AGE_MS: "soon" }, { TEMP_MAX_AGE_MS: "100000", BODY_TIMEOUT_MS: "60000" }]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(/TEMP_MAX_AGE_MS/);
    }
  });

  it("names every bad variable at once", () => {
    expect(() => loadConfig({ PORT: "x", LOG_LEVEL: "loud" })).toThrow(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/);
  });
});
