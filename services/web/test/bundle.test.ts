import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { WEB_URL_PREFIX, webDistDir, type WebBuildStats } from "../dist-dir.ts";

/** The built page: small, self-contained (no CDN, no remote font), with content-hashed asset names. */
describe("the page's build", () => {
  let stats: WebBuildStats;
  beforeAll(() => {
    // `pnpm test` builds first (turbo); a lone run of this file builds here.
    if (!existsSync(join(webDistDir, "build-stats.json")))
      execFileSync(process.execPath, ["--import", "tsx", join(webDistDir, "../build.ts")], { stdio: "inherit" });
    stats = JSON.parse(readFileSync(join(webDistDir, "build-stats.json"), "utf8")) as WebBuildStats;
  }, 60_000);

  it("ships under 100 kB of JavaScript gzipped", () => {
    console.log(
      `web page: JS ${stats.js.bytes} bytes (${stats.js.gzipBytes} gzipped), CSS ${stats.css.bytes} bytes (${stats.css.gzipBytes} gzipped)`,
    );
    expect(stats.js.gzipBytes).toBeLessThan(100 * 1024);
    expect(readFileSync(join(webDistDir, stats.js.file)).length).toBe(stats.js.bytes);
  });

  it("names its assets by content hash and index.html loads exactly them", () => {
    const html = readFileSync(join(webDistDir, "index.html"), "utf8");
    expect(stats.js.file).toMatch(/^assets\/main-[A-Z0-9]{8}\.js$/);
    expect(stats.css.file).toMatch(/^assets\/main-[A-Z0-9]{8}\.css$/);
    expect(html).toContain(`src="${WEB_URL_PREFIX}${stats.js.file}"`);
    expect(html).toContain(`href="${WEB_URL_PREFIX}${stats.css.file}"`);
  });

  it("loads nothing from another origin: no remote script, stylesheet or font", () => {
    const html = readFileSync(join(webDistDir, "index.html"), "utf8");
    const css = readFileSync(join(webDistDir, stats.css.file), "utf8");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(css).not.toMatch(/@import|@font-face|url\((["']?)(https?:)?\/\//);
  });
});
