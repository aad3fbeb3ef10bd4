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

  it("CATALOG_SOURCE defaults to the public registry; none means no source", () => {
    expect(loadConfig({}).CATALOG_SOURCE).toBe("https://api.comfy.org");
    expect(loadConfig({ CATALOG_SOURCE: "" }).CATALOG_SOURCE).toBe("https://api.comfy.org");
    expect(loadConfig({ CATALOG_SOURCE: "none" }).CATALOG_SOURCE).toBeUndefined();
    expect(loadConfig({ CATALOG_SOURCE: "./nodes.ndjson" }).CATALOG_SOURCE).toBe("./nodes.ndjson");
  });

  it("CATALOG_REFRESH takes off or a duration, in milliseconds; unset is left to the source's kind", () => {
    expect(loadConfig({}).CATALOG_REFRESH).toBeUndefined();
    expect(loadConfig({ CATALOG_REFRESH: "off" }).CATALOG_REFRESH).toBe(0);
    expect(loadConfig({ CATALOG_REFRESH: "2s" }).CATALOG_REFRESH).toBe(2000);
    expect(loadConfig({ CATALOG_REFRESH: "15m" }).CATALOG_REFRESH).toBe(900_000);
    expect(loadConfig({ CATALOG_REFRESH: "1h" }).CATALOG_REFRESH).toBe(3_600_000);
    expect(loadConfig({ CATALOG_REFRESH: "500ms" }).CATALOG_REFRESH).toBe(500);
    for (const bad of ["1", "soon", "-1h", "1 h"]) expect(() => loadConfig({ CATALOG_REFRESH: bad })).toThrow(/CATALOG_REFRESH/);
  });
});
