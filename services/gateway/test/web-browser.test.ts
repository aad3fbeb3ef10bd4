/// <reference lib="dom" />
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchPage } from "@app/contracts";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import { blake3Hex, noiseImage } from "@app/testkit/assets";
import { startChromium, type ElementHandle, type Page } from "@app/testkit/chromium";
import { repoRoot } from "@app/testkit/processes";
import { webDistDir } from "@app/web";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import { openApiRouter } from "../src/openapi-route.ts";
import { WEB_CATALOG } from "./web-catalog.ts";
import { serveOn } from "./web-support.ts";

/**
 * The web page in a real browser (Debian's chromium through puppeteer-core) against the
 * embedded stack in this process: search as a person types, filters, pages, the node page,
 * the back button, an upload, a mask drawn with the mouse, a wrong key. Screenshots of the
 * search page, a node page and the mask editor at 375 and 1440 px go to docs/screenshots.
 */
const KEY = "web-test-key-0123456789";
const MAX_UPLOAD = 1024 * 1024;
const SCREENSHOTS = join(repoRoot, "docs/screenshots");
const chromium = await startChromium();
if (!chromium.ok) console.log(`browser tests skipped: ${chromium.reason}`);

describe.skipIf(!chromium.ok)("the web page in chromium", () => {
  let base: string;
  let page: Page;
  let dataDir: string;
  let closables: Closable[] = [];
  let stopServer = async () => {};

  beforeAll(async () => {
    // `pnpm test` builds the page first (turbo); a lone `vitest run` of this file builds it here.
    if (!existsSync(join(webDistDir, "index.html"))) execFileSync(process.execPath, ["--import", "tsx", join(webDistDir, "../build.ts")], { stdio: "inherit" });
    dataDir = await mkdtemp(join(tmpdir(), "web-browser-"));
    const catalog = join(dataDir, "catalog.ndjson");
    await writeFile(catalog, WEB_CATALOG.map((r) => JSON.stringify(r)).join("\n"));
    const logger = createLogger("web-browser", "silent");
    const composed = await composeGateway(loadConfig({ DATA_DIR: dataDir, CATALOG_SOURCE: catalog, API_KEYS: KEY, UPLOAD_MAX_BYTES: String(MAX_UPLOAD), LOG_LEVEL: "silent" }), logger);
    closables = composed.closables;
    const server = await serveOn(createGatewayApp({ services: composed.services, logger, extraRoutes: openApiRouter(), webRoot: webDistDir }));
    base = server.url;
    stopServer = server.close;
    while ((await fetch(`${base}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 50));
    if (!chromium.ok) return;
    page = await chromium.browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.setViewport({ width: 1440, height: 900 });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => (m.type() === "error" ? errors.push(m.text()) : undefined));
  }, 120_000);

  afterAll(async () => {
    if (chromium.ok) await chromium.close();
    await stopServer();
    for (const c of closables) await c.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const api = async (query: string): Promise<SearchPage> => (await fetch(`${base}/nodes/search?${query}`)).json() as Promise<SearchPage>;
  const firstTitle = () => page.$eval(".results .result-title a", (a) => a.textContent ?? "");
  const resultIds = () => page.$$eval(".results .node-id", (els) => els.map((e) => e.textContent ?? ""));
  const waitFor = (fn: string, ...args: unknown[]) => page.waitForFunction(fn, {}, ...args);
  const waitFirstResult = (title: string) => waitFor(`document.querySelector(".results .result-title a")?.textContent === ${JSON.stringify(title)}`);
  /** Waits until the results on show answer this request (the list names the request it answers), then gives its first title. */
  async function shownFor(param: string, value: string): Promise<string> {
    await waitFor(`new URLSearchParams((document.querySelector(".results")?.dataset.request ?? "").split("?")[1]).get(${JSON.stringify(param)}) === ${JSON.stringify(value)}`);
    return firstTitle();
  }
  const waitFirstId = (id: string) => waitFor(`document.querySelector(".results .node-id")?.textContent === ${JSON.stringify(id)}`);
  const waitTotal = (total: number) => waitFor(`(document.querySelector("[data-testid=total]")?.textContent ?? "").startsWith(${JSON.stringify(`${total} pack`)})`);
  async function typeQuery(text: string) {
    await page.focus("#q");
    await page.keyboard.down("Control");
    await page.keyboard.press("a");
    await page.keyboard.up("Control");
    await page.keyboard.press("Backspace");
    await page.type("#q", text, { delay: 15 });
  }

  /** A viewport-sized picture, reduced to a palette PNG so the committed files stay small. */
  async function screenshot(name: string, width: 375 | 1440, fullPage = false) {
    await page.setViewport({ width, height: width === 375 ? 812 : 900 });
    // No blinking caret in the picture: the same page gives the same file on every run.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const shot = await page.screenshot({ type: "png", fullPage });
    const small = await sharp(shot).png({ palette: true, quality: 90, compressionLevel: 9, effort: 10 }).toBuffer();
    const file = join(SCREENSHOTS, `${name}-${width}.png`);
    if (!(await looksTheSame(file, small))) await writeFile(file, small);
    await page.setViewport({ width: 1440, height: 900 });
  }

  it("search as you type: the expected first result, highlighted, and the URL holds the query", async () => {
    await page.goto(`${base}/`);
    await typeQuery("impact pack");
    expect(await shownFor("search", "impact pack")).toBe("ComfyUI Impact Pack");
    expect(new URL(page.url()).searchParams.get("q")).toBe("impact pack");
    expect(await page.$$eval(".results li:first-child mark", (m) => m.map((e) => e.textContent))).toEqual(expect.arrayContaining(["Impact", "Pack"]));
    await screenshot("search", 1440);
    await screenshot("search", 375);
  }, 120_000);

  it("a typo still finds it", async () => {
    await typeQuery("contrlnet");
    const expected = (await api("search=contrlnet")).nodes[0]!;
    expect(expected.name).toMatch(/ControlNet/);
    expect(await shownFor("search", "contrlnet")).toBe(expected.name);
  }, 60_000);

  it("node class names (node:) and a pasted repository URL search from the same box", async () => {
    await typeQuery("node:FaceDetailer");
    expect(await shownFor("app_node_search", "FaceDetailer")).toBe("ComfyUI Impact Pack");
    expect(new URL(page.url()).searchParams.get("q")).toBe("node:FaceDetailer");
    await typeQuery("https://github.com/Kosinkadink/ComfyUI-Advanced-ControlNet");
    expect(await shownFor("repository_url_search", "https://github.com/Kosinkadink/ComfyUI-Advanced-ControlNet")).toBe("ComfyUI-Advanced-ControlNet");
    await waitTotal(1);
  }, 60_000);

  it("filters change the total, and the URL holds them", async () => {
    await page.goto(`${base}/`);
    const all = (await api("")).total;
    const mac = (await api("supported_os=macOS")).total;
    const macBanned = (await api("supported_os=macOS&include_banned=true")).total;
    expect(new Set([all, mac, macBanned]).size, "the fixture gives three different totals").toBe(3);
    await waitTotal(all);
    await page.select("#os", "macOS");
    await waitTotal(mac);
    await page.click("#banned");
    await waitTotal(macBanned);
    const url = new URL(page.url());
    expect([url.searchParams.get("os"), url.searchParams.get("banned")]).toEqual(["macOS", "1"]);
  }, 60_000);

  it("paging and the back button", async () => {
    await page.goto(`${base}/`);
    const [p1, p2] = [await api("page=1"), await api("page=2")];
    await waitFirstId(p1.nodes[0]!.id!);
    await page.click("a[rel=next]");
    await waitFirstId(p2.nodes[0]!.id!);
    expect(new URL(page.url()).searchParams.get("page")).toBe("2");
    expect(await resultIds()).toEqual(p2.nodes.map((n) => n.id));
    await page.goBack();
    await waitFirstId(p1.nodes[0]!.id!);
    expect(new URL(page.url()).searchParams.get("page")).toBeNull();
  }, 60_000);

  it("a result opens the node page: everything the API says, its node classes, its versions, the install hint; back returns to the search", async () => {
    await page.goto(`${base}/?q=impact`);
    await waitFirstResult("ComfyUI Impact Pack");
    await page.click(".results .result-title a");
    await waitFor(`document.querySelector("h1")?.textContent === "ComfyUI Impact Pack"`);
    expect(new URL(page.url()).pathname).toBe("/ui/nodes/comfyui-impact-pack");
    expect(await page.$eval("#install", (c) => c.textContent)).toBe("comfy node install comfyui-impact-pack");
    await waitFor(`document.querySelectorAll(".classes li").length >= 3`);
    expect(await page.$$eval(".classes li", (l) => l.map((e) => e.textContent))).toEqual(["FaceDetailer", "SAMLoader", "DetailerForEach"]);
    const body = await page.$eval("main", (m) => m.textContent ?? "");
    for (const fact of ["8.8.1", "Dr.Lt.Data", "3,262", "181,234", "ultralytics", "https://github.com/ltdrdata/ComfyUI-Impact-Pack"]) expect(body).toContain(fact);
    expect(await page.$eval("article p:first-child a", (a) => a.getAttribute("href"))).toBe("/?q=impact");
    // Its versions, newest first, each with its status; the one an install takes is marked.
    await waitFor(`document.querySelectorAll("table.versions tbody tr").length === 4`);
    const rows = await page.$$eval("table.versions tbody tr", (trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).slice(0, 3).map((td) => td.textContent?.trim() ?? "")));
    expect(rows).toEqual([
      ["8.9.0", "Jul 1, 2025", "banned"],
      ["8.8.1installs", "Jun 1, 2025", "active"],
      ["8.8.0", "May 1, 2025", "pending"],
      ["8.7.0", "Apr 1, 2025", "activedeprecated"],
    ]);
    expect(await page.$eval("tr[data-version='8.8.1'] a", (a) => a.getAttribute("href"))).toBe("https://cdn.comfy.org/ltdrdata/comfyui-impact-pack/8.8.1/node.zip");
    await screenshot("node", 1440, true);
    await screenshot("node", 375, true);
    await page.goBack();
    await waitFirstResult("ComfyUI Impact Pack");
    expect(await page.$eval("#q", (i) => (i as HTMLInputElement).value)).toBe("impact");
  }, 120_000);

  it("works from the keyboard: Tab from the box reaches the filters, Enter on a result opens it", async () => {
    await page.goto(`${base}/?q=impact`);
    await waitFirstResult("ComfyUI Impact Pack");
    await page.focus("#q");
    await page.keyboard.press("Tab");
    await waitFor(`document.activeElement?.id === "os"`);
    await page.focus(".results .result-title a");
    await page.keyboard.press("Enter");
    await waitFor(`document.querySelector("h1")?.textContent === "ComfyUI Impact Pack"`);
    await waitFor(`document.title === "comfyui-impact-pack · Node registry"`);
  }, 60_000);

  it("an unknown node shows the API's message, not a blank page", async () => {
    await page.goto(`${base}/ui/nodes/no-such-pack`);
    await waitFor(`document.querySelector("[role=alert]")?.textContent?.includes("no node with id")`);
  }, 60_000);

  let imageName = "";
  it("upload an image by the picker: its name, then 'already stored' for the same bytes", async () => {
    const png = await sharp(Buffer.from(PICTURE_SVG)).png().toBuffer();
    const file = join(dataDir, "landscape.png");
    await writeFile(file, png);
    imageName = `${blake3Hex(png)}.png`;
    await page.goto(`${base}/ui/upload`);
    await page.type("#api-key", KEY);
    await page.click(".key-form button[type=submit]");
    const input = (await page.waitForSelector("#image-file")) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(file);
    await waitFor(`document.querySelector("[data-testid=uploaded-name]")?.textContent === ${JSON.stringify(imageName)}`);
    expect(await page.$("[data-testid=dedup]")).toBeNull();
    await page.click(".upload-form button[type=submit]");
    await page.waitForSelector("[data-testid=dedup]");
    expect(await page.evaluate(() => localStorage.getItem("registry.apiKey"))).toBe(KEY);
  }, 60_000);

  it("another browser uploading bytes the store already holds is told 'already stored' (the asset API's HEAD by hash)", async () => {
    const png = await sharp(Buffer.from(PICTURE_SVG.replace("#ffcf40", "#ff7040"))).png().toBuffer();
    const file = join(dataDir, "sunset.png");
    await writeFile(file, png);
    const form = new FormData();
    form.set("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "sunset.png");
    expect((await fetch(`${base}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": KEY } })).status).toBe(200);
    expect((await fetch(`${base}/api/assets/hash/blake3:${blake3Hex(png)}`, { method: "HEAD", headers: { "X-API-Key": KEY } })).status).toBe(200);
    if (!chromium.ok) throw new Error("the suite runs only with chromium");
    const context = await chromium.browser.createBrowserContext();
    const other = await context.newPage();
    try {
      await other.goto(`${base}/ui/upload`);
      await other.type("#api-key", KEY);
      await other.click(".key-form button[type=submit]");
      const input = (await other.waitForSelector("#image-file")) as ElementHandle<HTMLInputElement>;
      await input.uploadFile(file);
      await other.waitForFunction(`document.querySelector("[data-testid=uploaded-name]")?.textContent === ${JSON.stringify(`${blake3Hex(png)}.png`)}`);
      expect(await other.$("[data-testid=dedup]")).not.toBeNull();
    } finally {
      await context.close();
    }
  }, 60_000);

  it("draw a stroke, upload the mask: the painted image is transparent under the stroke and opaque elsewhere", async () => {
    expect(imageName).not.toBe("");
    await page.click("a.button[href^='/ui/mask']");
    const canvas = await page.waitForSelector("[data-testid=mask-canvas]");
    const pressedIs = (tool: string) => waitFor(`[...document.querySelectorAll(".toolbar button[aria-pressed=true]")].map((b) => b.textContent).join() === ${JSON.stringify(tool)}`);
    await page.focus("button[aria-keyshortcuts=E]");
    await page.keyboard.press("Space");
    await pressedIs("Eraser");
    await page.keyboard.press("b");
    await pressedIs("Brush");
    const box = (await canvas!.boundingBox())!;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * 0.2, y);
    await page.mouse.down();
    for (let i = 1; i <= 12; i++) await page.mouse.move(box.x + box.width * (0.2 + (0.6 * i) / 12), y);
    await page.mouse.up();
    await page.click("button.primary");
    await waitFor(`["mask", "paint", "painted"].every((id) => { const img = document.querySelector("img[data-testid=" + id + "]"); return img && img.complete && img.naturalWidth > 0; })`);
    const alpha = await page.evaluate(() => {
      const img = document.querySelector<HTMLImageElement>("img[data-testid=painted]")!;
      const c = document.createElement("canvas");
      c.width = img.naturalWidth;
      c.height = img.naturalHeight;
      const ctx = c.getContext("2d")!;
      ctx.drawImage(img, 0, 0);
      const at = (x: number, y: number) => ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data[3];
      const w = c.width;
      const h = c.height;
      return { size: [w, h], under: [at(w * 0.3, h / 2), at(w * 0.5, h / 2), at(w * 0.7, h / 2)], outside: [at(2, 2), at(w - 3, h - 3), at(w / 2, 4)] };
    });
    expect(alpha.size).toEqual([480, 320]);
    expect(alpha.under).toEqual([0, 0, 0]);
    expect(alpha.outside).toEqual([255, 255, 255]);
    await screenshot("mask", 1440, true);
    await screenshot("mask", 375, true);
  }, 120_000);

  it("the gallery shows the uploaded image from the asset list, with its bytes and a link to mask it", async () => {
    const list = (await (await fetch(`${base}/api/assets?limit=100`, { headers: { "X-API-Key": KEY } })).json()) as { total: number };
    await page.goto(`${base}/ui/gallery`);
    await page.waitForSelector(`.tile[data-name="${imageName}"] img[src^="blob:"]`);
    expect(await page.$eval("main", (m) => m.textContent ?? "")).toContain(`${list.total} assets in the store`);
    expect(await page.$eval(`.tile[data-name="${imageName}"] a`, (a) => a.getAttribute("href"))).toMatch(/^\/ui\/mask\?name=/);
  }, 60_000);

  it("the gallery shows a non-image asset as an icon with its name, size and type, and filters by tag", async () => {
    const form = new FormData();
    form.append("tags", JSON.stringify(["models", "model_type:checkpoints", "gallery-models"]));
    form.append("name", "tiny-model.safetensors");
    form.append("file", new Blob([new Uint8Array(3000).fill(7)]), "tiny-model.safetensors");
    const made = await fetch(`${base}/api/assets`, { method: "POST", headers: { "X-API-Key": KEY }, body: form });
    expect([200, 201]).toContain(made.status);
    await page.goto(`${base}/ui/gallery?tag=gallery-models`);
    await page.waitForSelector(".tile [data-testid=file-icon]");
    const tiles = await page.$$eval(".tile", (ts) => ts.map((t) => t.textContent ?? ""));
    expect(tiles).toHaveLength(1);
    expect(tiles[0]).toContain("tiny-model.safetensors");
    expect(tiles[0]).toContain("application/octet-stream · 2.9 kB");
    expect(await page.$eval("main", (m) => m.textContent ?? "")).toContain('1 assets tagged "gallery-models"');
    // A tag chip filters by that tag; "Show all" clears it.
    await page.click(".tile .chip:nth-child(1)");
    await waitFor(`location.search === "?tag=models"`);
    await page.click(".tag-filter button.link");
    await waitFor(`location.search === "" && document.querySelectorAll(".tile").length > 1`);
  }, 60_000);

  it("the API's refusals in its own words: 400 for a file that is not an image, 413 for one over the limit", async () => {
    await page.goto(`${base}/ui/upload`);
    const notImage = join(dataDir, "notes.png");
    await writeFile(notImage, "these are notes, not pixels\n".repeat(20));
    const input = (await page.waitForSelector("#image-file")) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(notImage);
    await waitFor(`document.querySelector("[role=alert]")?.textContent?.includes("not a decodable image")`);
    const big = join(dataDir, "big.png");
    const bytes = await noiseImage(700, 700);
    expect(bytes.length).toBeGreaterThan(MAX_UPLOAD);
    await writeFile(big, bytes);
    await input.uploadFile(big);
    await waitFor(`document.querySelector("[role=alert]")?.textContent?.includes("larger than UPLOAD_MAX_BYTES")`);
  }, 60_000);

  it("a wrong key shows the API's 401 message", async () => {
    await page.goto(`${base}/ui/upload`);
    await page.click(".key-line button");
    await page.type("#api-key", "not-the-key");
    await page.click(".key-form button[type=submit]");
    const input = (await page.waitForSelector("#image-file")) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(join(dataDir, "landscape.png"));
    await waitFor(`document.querySelector("[role=alert]")?.textContent?.includes("unknown API key")`);
    await page.goto(`${base}/ui/gallery`);
    await waitFor(`document.querySelector("[role=alert]")?.textContent?.includes("unknown API key") || document.querySelector(".gallery") !== null`);
  }, 60_000);
});

/**
 * Chromium's text antialiasing differs by a shade from run to run: a committed screenshot is
 * rewritten only when the page looks different (more than 0.05% of pixels changed visibly).
 */
async function looksTheSame(file: string, png: Buffer): Promise<boolean> {
  if (!existsSync(file)) return false;
  const [a, b] = await Promise.all([file, png].map((input) => sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true })));
  if (a!.info.width !== b!.info.width || a!.info.height !== b!.info.height) return false;
  let changed = 0;
  for (let i = 0; i < a!.data.length; i += 4) {
    const d = Math.abs(a!.data[i]! - b!.data[i]!) + Math.abs(a!.data[i + 1]! - b!.data[i + 1]!) + Math.abs(a!.data[i + 2]! - b!.data[i + 2]!);
    if (d > 48) changed++;
  }
  return changed < 0.0005 * a!.info.width * a!.info.height;
}

/** The picture the mask test paints over (an RGB PNG, no alpha of its own). */
const PICTURE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="320">
<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#7fb2ff"/><stop offset="1" stop-color="#ffe3b3"/></linearGradient></defs>
<rect width="480" height="320" fill="url(#sky)"/><circle cx="360" cy="90" r="42" fill="#ffcf40"/>
<path d="M0 250 L120 150 L230 240 L330 170 L480 260 L480 320 L0 320 Z" fill="#3f7d4e"/>
<path d="M0 290 L160 230 L300 290 L480 250 L480 320 L0 320 Z" fill="#2c5a38"/></svg>`;
