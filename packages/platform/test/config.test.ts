import { describe, expect, it } from "vitest";
import { catalogSourceName, loadConfig, parseCatalogSource } from "../src/index.ts";

describe("loadConfig", () => {
  it("defaults every variable, and an empty string counts as unset", () => {
    const c = loadConfig({ PORT: "" });
    expect(c).toMatchObject({ PORT: 8080, DATA_DIR: "./.data", LOG_LEVEL: "info" });
  });

  it("TEMP_MAX_AGE_MS defaults to an hour, and refuses less than a minute or less than twice BODY_TIMEOUT_MS", () => {
    expect(loadConfig({}).TEMP_MAX_AGE_MS).toBe(3_600_000);
    expect(loadConfig({ TEMP_MAX_AGE_MS: "120000", BODY_TIMEOUT_MS: "60000" }).TEMP_MAX_AGE_MS).toBe(120_000);
    for (const env of [
      { TEMP_MAX_AGE_MS: "59999" },
      { TEMP_MAX_AGE_MS: "soon" },
      { TEMP_MAX_AGE_MS: "100000", BODY_TIMEOUT_MS: "60000" },
    ]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(/TEMP_MAX_AGE_MS/);
    }
  });

  it("names every bad variable at once", () => {
    expect(() => loadConfig({ PORT: "x", LOG_LEVEL: "loud" })).toThrow(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/);
  });

  it("CATALOG_SOURCE defaults to the public registry; none means no source", () => {
    expect(loadConfig({}).CATALOG_SOURCE).toEqual({ kind: "registry", url: "https://api.comfy.org" });
    expect(loadConfig({ CATALOG_SOURCE: "" }).CATALOG_SOURCE).toEqual({ kind: "registry", url: "https://api.comfy.org" });
    expect(loadConfig({ CATALOG_SOURCE: "none" }).CATALOG_SOURCE).toEqual({ kind: "none" });
    expect(loadConfig({ CATALOG_SOURCE: "NONE" }).CATALOG_SOURCE).toEqual({ kind: "none" });
    expect(loadConfig({ CATALOG_SOURCE: "./nodes.ndjson" }).CATALOG_SOURCE).toEqual({ kind: "file", path: "./nodes.ndjson" });
  });

  it("CATALOG_SOURCE is parsed once into its kind: a registry URL, a bundle (.tar), or a file", () => {
    expect(loadConfig({ CATALOG_SOURCE: " HTTP://registry.local/api " }).CATALOG_SOURCE).toEqual({
      kind: "registry",
      url: "HTTP://registry.local/api",
    });
    expect(loadConfig({ CATALOG_SOURCE: "/media/usb/mirror.TAR" }).CATALOG_SOURCE).toEqual({
      kind: "bundle",
      path: "/media/usb/mirror.TAR",
    });
    // A URL that names a tar is still a registry to mirror, as it always was.
    expect(loadConfig({ CATALOG_SOURCE: "https://example.com/x.tar" }).CATALOG_SOURCE).toEqual({
      kind: "registry",
      url: "https://example.com/x.tar",
    });
    expect(loadConfig({ CATALOG_SOURCE: "nodes.json" }).CATALOG_SOURCE).toEqual({ kind: "file", path: "nodes.json" });
    for (const v of ["https://api.comfy.org", "/data/nodes.ndjson", "/media/mirror.tar"])
      expect(catalogSourceName(parseCatalogSource(v))).toBe(v);
    expect(catalogSourceName({ kind: "none" })).toBeNull();
  });

  it("each service has its own default port, PORT sets them all, and a service's own variable wins", () => {
    expect(loadConfig({})).toMatchObject({ PORT: 8080, SEARCH_PORT: 8081, UPLOAD_PORT: 8082, WORKER_PORT: 8083 });
    expect(loadConfig({ PORT: "9000" })).toMatchObject({ PORT: 9000, SEARCH_PORT: 9000, UPLOAD_PORT: 9000, WORKER_PORT: 9000 });
    expect(loadConfig({ PORT: "9000", UPLOAD_PORT: "9100" })).toMatchObject({
      PORT: 9000,
      SEARCH_PORT: 9000,
      UPLOAD_PORT: 9100,
      WORKER_PORT: 9000,
    });
    expect(() => loadConfig({ SEARCH_PORT: "eighty" })).toThrow(/SEARCH_PORT/);
  });

  it("MIRROR_ARCHIVES is off, on-demand (default), latest or all; PUBLIC_URL is a URL without its trailing slash", () => {
    expect(loadConfig({}).MIRROR_ARCHIVES).toBe("on-demand");
    for (const v of ["off", "on-demand", "latest", "all"] as const) expect(loadConfig({ MIRROR_ARCHIVES: v }).MIRROR_ARCHIVES).toBe(v);
    for (const bad of ["yes", "ondemand", "ALL "]) expect(() => loadConfig({ MIRROR_ARCHIVES: bad })).toThrow(/MIRROR_ARCHIVES/);
    expect(loadConfig({}).PUBLIC_URL).toBeUndefined();
    expect(loadConfig({ PUBLIC_URL: "https://api.comfy.org/" }).PUBLIC_URL).toBe("https://api.comfy.org");
    expect(() => loadConfig({ PUBLIC_URL: "api.comfy.org" })).toThrow(/PUBLIC_URL/);
  });

  it("CATALOG_FULL_REFRESH is a duration, one day by default; 0s makes every refresh full; off is refused", () => {
    expect(loadConfig({}).CATALOG_FULL_REFRESH).toBe(86_400_000);
    expect(loadConfig({ CATALOG_FULL_REFRESH: "12h" }).CATALOG_FULL_REFRESH).toBe(43_200_000);
    expect(loadConfig({ CATALOG_FULL_REFRESH: "0s" }).CATALOG_FULL_REFRESH).toBe(0);
    for (const bad of ["off", "1", "daily"]) expect(() => loadConfig({ CATALOG_FULL_REFRESH: bad })).toThrow(/CATALOG_FULL_REFRESH/);
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
