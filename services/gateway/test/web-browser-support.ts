/// <reference lib="dom" />
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import type { CatalogRecord } from "@app/contracts";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import type { Browser, Page } from "@app/testkit/chromium";
import { repoRoot } from "@app/testkit/processes";
import { webDistDir } from "@app/web";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import { openApiRouter } from "../src/openapi-route.ts";
import { serveOn } from "./web-support.ts";

/** The browser tests' API key. */
export const WEB_KEY = "web-test-key-0123456789";
const SCREENSHOTS = join(repoRoot, "docs/screenshots");

export interface WebStack {
  base: string;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * The embedded stack (gateway with search and upload in process) serving the built page, on a
 * free port. `catalog` is written as the file source unless `env.CATALOG_SOURCE` names another.
 */
export async function startWebStack(
  opts: { catalog?: CatalogRecord[]; env?: Record<string, string>; waitReady?: boolean } = {},
): Promise<WebStack> {
  // `pnpm test` builds the page first (turbo); a lone `vitest run` builds it here.
  if (!existsSync(join(webDistDir, "index.html")))
    execFileSync(process.execPath, ["--import", "tsx", join(webDistDir, "../build.ts")], { stdio: "inherit" });
  const dataDir = await mkdtemp(join(tmpdir(), "web-browser-"));
  const env: Record<string, string> = { DATA_DIR: dataDir, API_KEYS: WEB_KEY, LOG_LEVEL: "silent", ...opts.env };
  if (!env.CATALOG_SOURCE) {
    env.CATALOG_SOURCE = join(dataDir, "catalog.ndjson");
    await writeFile(env.CATALOG_SOURCE, (opts.catalog ?? []).map((r) => JSON.stringify(r)).join("\n"));
  }
  const logger = createLogger("web-browser", "silent");
  const composed = await composeGateway(loadConfig(env), logger);
  const closables: Closable[] = composed.closables;
  const server = await serveOn(
    createGatewayApp({ services: composed.services, logger, extraRoutes: openApiRouter(), webRoot: webDistDir }),
  );
  if (opts.waitReady !== false) while ((await fetch(`${server.url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 50));
  return {
    base: server.url,
    dataDir,
    close: async () => {
      await server.close();
      for (const c of closables) await c.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A page at 1440×900 whose JavaScript errors fail the test that reads `errors`. */
export async function openPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  await page.setViewport({ width: 1440, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, errors };
}

export const waitFor = (page: Page, fn: string) => page.waitForFunction(fn, { polling: 50 });

/** Saves the key in the page's storage, as the key form does. */
export async function useKey(page: Page, base: string, key = WEB_KEY): Promise<void> {
  await page.goto(`${base}/ui/gallery`);
  await page.evaluate((k) => localStorage.setItem("registry.apiKey", k), key);
}

export const WIDTHS = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;

/**
 * The page as it looks now at 1440×900 and 390×844, light and dark (prefers-color-scheme), as
 * palette PNGs in docs/screenshots (`<name>-<width>[-dark].png`). `prepare` runs after each
 * resize (a layout that reflows may need its state set again). Also checks the page is clean
 * at both widths: nothing wider than the viewport.
 */
export async function screenshots(
  page: Page,
  name: string,
  opts: { fullPage?: boolean; prepare?: () => Promise<void> } = {},
): Promise<{ overflow: Record<string, number> }> {
  const overflow: Record<string, number> = {};
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
    for (const size of Object.values(WIDTHS)) {
      await page.setViewport(size);
      await opts.prepare?.();
      // No blinking caret in the picture: the same page gives the same file on every run.
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      overflow[`${size.width}-${scheme}`] = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      const shot = await page.screenshot({ type: "png", fullPage: opts.fullPage ?? false });
      const small = await sharp(shot).png({ palette: true, quality: 90, compressionLevel: 9, effort: 10 }).toBuffer();
      const file = join(SCREENSHOTS, `${name}-${size.width}${scheme === "dark" ? "-dark" : ""}.png`);
      if (!(await looksTheSame(file, small))) await writeFile(file, small);
    }
  }
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  await page.setViewport(WIDTHS.desktop);
  return { overflow };
}

/**
 * Chromium's text antialiasing differs by a shade from run to run, and some pages show what each
 * run makes anew (a port, a temporary path, an id): a committed screenshot is rewritten only when
 * the page looks different (more than 0.5% of pixels changed visibly; a moved block is far more).
 */
async function looksTheSame(file: string, png: Buffer): Promise<boolean> {
  if (!existsSync(file)) return false;
  const [a, b] = await Promise.all([file, png].map((input) => sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true })));
  if (a!.info.width !== b!.info.width || a!.info.height !== b!.info.height) return false;
  let changed = 0;
  for (let i = 0; i < a!.data.length; i += 4) {
    const d =
      Math.abs(a!.data[i]! - b!.data[i]!) + Math.abs(a!.data[i + 1]! - b!.data[i + 1]!) + Math.abs(a!.data[i + 2]! - b!.data[i + 2]!);
    if (d > 48) changed++;
  }
  return changed < 0.005 * a!.info.width * a!.info.height;
}
