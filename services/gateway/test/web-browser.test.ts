/// <reference lib="dom" />
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchPage } from "@app/contracts";
import { blake3Hex } from "@app/testkit/assets";
import { startChromium, type ElementHandle, type Page } from "@app/testkit/chromium";
import { openPage, screenshots, startWebStack, WEB_KEY as KEY, type WebStack } from "./web-browser-support.ts";
import { WEB_CATALOG } from "./web-catalog.ts";
import { noiseImage } from "@app/testkit/png";

/**
 * The web page in a real browser (Debian's chromium through puppeteer-core) against the
 * embedded stack in this process: search as a person types, filters, pages, the node page,
 * the back button, an upload, a mask drawn with the mouse, a wrong key. Screenshots of the
 * search page and the mask editor at 1440 and 390 px, light and dark, go to docs/screenshots.
 */
const MAX_UPLOAD = 1024 * 1024;
const chromium = await startChromium();
if (!chromium.ok) console.log(`browser tests skipped: ${chromium.reason}`);

describe.skipIf(!chromium.ok)("the web page in chromium", () => {
  let base: string;
  let page: Page;
  let dataDir: string;
  let stack: WebStack | undefined;
  let errors: string[] = [];

  beforeAll(async () => {
    stack = await startWebStack({
      catalog: WEB_CATALOG,
      env: { UPLOAD_MAX_BYTES: String(MAX_UPLOAD), ASSET_UPLOAD_MAX_BYTES: String(MAX_UPLOAD) },
    });
    base = stack.base;
    dataDir = stack.dataDir;
    if (!chromium.ok) return;
    ({ page, errors } = await openPage(chromium.browser));
  }, 120_000);

  afterAll(async () => {
    if (chromium.ok) await chromium.close();
    await stack?.close();
    expect(errors).toEqual([]);
  });

  const api = async (query: string): Promise<SearchPage> => (await fetch(`${base}/nodes/search?${query}`)).json() as Promise<SearchPage>;
  const firstTitle = () => page.$eval(".results .result-title a", (a) => a.textContent ?? "");
  const resultIds = () => page.$$eval(".results .node-id", (els) => els.map((e) => e.textContent ?? ""));
  const waitFor = (fn: string, ...args: unknown[]) => page.waitForFunction(fn, {}, ...args);
  const waitFirstResult = (title: string) =>
    waitFor(`document.querySelector(".results .result-title a")?.textContent === ${JSON.stringify(title)}`);
  /** Waits until the results on show answer this request (the list names the request it answers), then gives its first title. */
  async function shownFor(param: string, value: string): Promise<string> {
    await waitFor(
      `new URLSearchParams((document.querySelector(".results")?.dataset.request ?? "").split("?")[1]).get(${JSON.stringify(param)}) === ${JSON.stringify(value)}`,
    );
    return firstTitle();
  }
  const waitFirstId = (id: string) => waitFor(`document.querySelector(".results .node-id")?.textContent === ${JSON.stringify(id)}`);
  const waitTotal = (total: number) =>
    waitFor(`(document.querySelector("[data-testid=total]")?.textContent ?? "").startsWith(${JSON.stringify(`${total} pack`)})`);
  async function typeQuery(text: string) {
    await page.focus("#q");
    await page.keyboard.down("Control");
    await page.keyboard.press("a");
    await page.keyboard.up("Control");
    await page.keyboard.press("Backspace");
    await page.type("#q", text, { delay: 15 });
  }

  it("search as you type: the expected first result, highlighted, and the URL holds the query", async () => {
    await page.goto(`${base}/`);
    await typeQuery("impact pack");
    expect(await shownFor("search", "impact pack")).toBe("ComfyUI Impact Pack");
    expect(new URL(page.url()).searchParams.get("q")).toBe("impact pack");
    expect(await page.$$eval(".results li:first-child mark", (m) => m.map((e) => e.textContent))).toEqual(
      expect.arrayContaining(["Impact", "Pack"]),
    );
    const { overflow } = await screenshots(page, "search");
    expect(
      Object.values(overflow).every((px) => px <= 0),
      JSON.stringify(overflow),
    ).toBe(true);
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
    expect(await shownFor("repository_url_search", "https://github.com/Kosinkadink/ComfyUI-Advanced-ControlNet")).toBe(
      "ComfyUI-Advanced-ControlNet",
    );
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

  it("a result opens the node page: the install command for this instance, its versions, the facts that mean something; back returns to the search", async () => {
    await page.goto(`${base}/?q=impact`);
    await waitFirstResult("ComfyUI Impact Pack");
    await page.click(".results .result-title a");
    await waitFor(`document.querySelector("h1")?.textContent === "ComfyUI Impact Pack"`);
    expect(new URL(page.url()).pathname).toBe("/ui/nodes/comfyui-impact-pack");
    await page.waitForSelector("#install");
    expect(await page.$eval("#install", (c) => c.textContent)).toBe("ENVIRONMENT=dev comfy node registry-install comfyui-impact-pack");
    expect(await page.$eval("[data-testid=install-version]", (c) => c.textContent)).toBe("8.8.1");
    // This test's origin is a random port, which comfy-cli cannot name: the box says how to forward it.
    expect(await page.$eval(".install", (c) => c.textContent ?? "")).toContain(`ssh -N -L 8080:127.0.0.1:${new URL(base).port} 127.0.0.1`);
    expect(await page.$eval(".install a[href='/ui/clients']", (a) => a.textContent)).toMatch(/ComfyUI tools/);
    const body = await page.$eval("main", (m) => m.textContent ?? "");
    for (const fact of ["Dr.Lt.Data", "3,262 stars", "181,234 downloads", "ultralytics", "https://github.com/ltdrdata/ComfyUI-Impact-Pack"])
      expect(body).toContain(fact);
    expect(await page.$("[data-testid=rating]"), "a 0 rating means no rating").toBeNull();
    expect(body).not.toContain('{"file"');
    expect(
      await page.$$eval(".fact-row", (rows) =>
        rows
          .find((r) => r.querySelector("dt")?.textContent === "License")
          ?.querySelector("a")
          ?.getAttribute("href"),
      ),
    ).toBe("https://github.com/ltdrdata/ComfyUI-Impact-Pack/blob/HEAD/LICENSE.txt");
    expect(await page.$eval("article p:first-child a", (a) => a.getAttribute("href"))).toBe("/?q=impact");
    // Its versions, newest first: status, reason, and a command and archive only where it installs.
    await waitFor(`document.querySelectorAll("table.versions tbody tr").length === 4`);
    const rows = await page.$$eval("table.versions tbody tr", (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent?.trim() ?? "")),
    );
    expect(rows.map((r) => r.slice(0, 3))).toEqual([
      ["8.9.0", "Jul 1, 2025", "bannedmalicious code"],
      ["8.8.1installs", "Jun 1, 2025", "active"],
      ["8.8.0", "May 1, 2025", "pending"],
      ["8.7.0", "Apr 1, 2025", "activedeprecated"],
    ]);
    expect(rows[0]![3]).toBe("not installable");
    expect(await page.$("tr[data-version='8.9.0'] a"), "no download for a banned version").toBeNull();
    // The archive from this instance (every downloadUrl points at its /archives).
    expect(await page.$eval("tr[data-version='8.8.1'] a.download", (a) => a.getAttribute("href"))).toBe(
      `${base}/archives/comfyui-impact-pack/8.8.1/node.zip`,
    );
    expect(await page.$eval("tr[data-version='8.8.0'] button.copy", (b) => b.dataset.copy)).toBe(
      "ENVIRONMENT=dev comfy node registry-install comfyui-impact-pack --version 8.8.0",
    );
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

  it("a banned pack's page says it is banned, with the registry's reason, and offers nothing to install", async () => {
    await page.goto(`${base}/ui/nodes/banned-pack`);
    await waitFor(`document.querySelector("[data-testid=pack-status]")?.textContent?.includes("banned")`);
    expect(await page.$eval("[data-testid=pack-status]", (e) => e.textContent)).toContain("malicious code");
    expect(await page.$eval("h1", (e) => e.textContent)).toBe("Banned Sampler Packbanned");
    expect(await page.$("#install")).toBeNull();
    // The registry answers a banned pack's versions 403: the page says what that means.
    await page.waitForSelector("[data-testid=versions-error]");
    expect(await page.$eval("[data-testid=versions-error]", (e) => e.textContent)).toBe("The registry lists no versions of a banned pack.");
    expect(await page.$("table.versions a, table.versions button.copy, a.download")).toBeNull();
  }, 60_000);

  it("a pack whose every version is deleted shows no installable version, and its versions as deleted", async () => {
    await page.goto(`${base}/ui/nodes/deleted-only-pack`);
    await page.waitForSelector("[data-testid=no-install]");
    expect(await page.$("#install")).toBeNull();
    await waitFor(`document.querySelectorAll("table.versions tbody tr").length === 2`);
    expect(await page.$$eval("table.versions tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-status")))).toEqual([
      "deleted",
      "deleted",
    ]);
    const table = await page.$eval("table.versions", (t) => t.textContent ?? "");
    expect(table).not.toContain("installs");
    expect(await page.$("table.versions a, table.versions button.copy")).toBeNull();
  }, 60_000);

  let imageHash = "";
  /** Chooses a file on the upload form and starts it (settings are chosen before: here the defaults). */
  async function uploadThroughForm(p: Page, file: string) {
    const input = (await p.waitForSelector("#asset-file")) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(file);
    await p.waitForFunction(
      `document.querySelector("[data-testid=chosen]")?.textContent?.includes(${JSON.stringify(file.split("/").pop())})`,
    );
    await p.click(".upload-form button[type=submit]");
  }

  it("upload an image by the picker: its name, hash and original_ref to copy, then 'already stored' for the same bytes", async () => {
    const png = await sharp(Buffer.from(PICTURE_SVG)).png().toBuffer();
    const file = join(dataDir, "landscape.png");
    await writeFile(file, png);
    imageHash = `blake3:${blake3Hex(png)}`;
    await page.goto(`${base}/ui/upload`);
    await page.type("#api-key", KEY);
    await page.click(".key-form button[type=submit]");
    await uploadThroughForm(page, file);
    await waitFor(`document.querySelector("[data-testid=uploaded-hash]")?.textContent === ${JSON.stringify(imageHash)}`);
    expect(await page.$eval("[data-testid=uploaded-name]", (e) => e.textContent)).toBe("landscape.png");
    expect(await page.$eval("[data-testid=original-ref]", (e) => e.textContent)).toBe(imageHash);
    expect(await page.$$eval(".upload-result button.copy", (bs) => bs.map((b) => b.dataset.copy))).toEqual(
      expect.arrayContaining(["landscape.png", imageHash]),
    );
    expect(await page.$eval(".upload-result", (e) => e.textContent ?? "")).not.toContain("“”");
    expect(await page.$("[data-testid=dedup]")).toBeNull();
    await page.click(".upload-form button[type=submit]");
    await page.waitForSelector("[data-testid=dedup]");
    // A record of known bytes only: the name given, and no "Stored as" row (it wrote no file).
    expect(await page.$eval("[data-testid=uploaded-name]", (e) => e.textContent)).toBe("landscape.png");
    expect(await page.$$eval(".upload-result dt", (dts) => dts.map((d) => d.textContent))).not.toContain("Stored as");
    expect(await page.evaluate(() => localStorage.getItem("registry.apiKey"))).toBe(KEY);
  }, 60_000);

  it("another browser uploading bytes the store already holds is told 'already stored' (the asset API's HEAD by hash)", async () => {
    const png = await sharp(Buffer.from(PICTURE_SVG.replace("#ffcf40", "#ff7040")))
      .png()
      .toBuffer();
    const file = join(dataDir, "sunset.png");
    await writeFile(file, png);
    const form = new FormData();
    form.set("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "sunset.png");
    expect((await fetch(`${base}/api/upload/image`, { method: "POST", body: form, headers: { "X-API-Key": KEY } })).status).toBe(200);
    expect(
      (await fetch(`${base}/api/assets/hash/blake3:${blake3Hex(png)}`, { method: "HEAD", headers: { "X-API-Key": KEY } })).status,
    ).toBe(200);
    if (!chromium.ok) throw new Error("the suite runs only with chromium");
    const context = await chromium.browser.createBrowserContext();
    const other = await context.newPage();
    try {
      await other.goto(`${base}/ui/upload`);
      await other.type("#api-key", KEY);
      await other.click(".key-form button[type=submit]");
      await uploadThroughForm(other, file);
      await other.waitForFunction(
        `document.querySelector("[data-testid=uploaded-hash]")?.textContent === ${JSON.stringify(`blake3:${blake3Hex(png)}`)}`,
      );
      expect(await other.$("[data-testid=dedup]")).not.toBeNull();
    } finally {
      await context.close();
    }
  }, 60_000);

  it("draw a stroke, upload the mask: the painted image is transparent under the stroke and opaque elsewhere", async () => {
    expect(imageHash).not.toBe("");
    await page.click("a.button[href^='/ui/mask?asset=']");
    const canvas = await page.waitForSelector("[data-testid=mask-canvas]");
    const pressedIs = (tool: string) =>
      waitFor(
        `[...document.querySelectorAll(".toolbar button[aria-pressed=true]")].map((b) => b.textContent).join() === ${JSON.stringify(tool)}`,
      );
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
    await waitFor(
      `["mask", "paint", "painted"].every((id) => { const img = document.querySelector("img[data-testid=" + id + "]"); return img && img.complete && img.naturalWidth > 0; })`,
    );
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
      return {
        size: [w, h],
        under: [at(w * 0.3, h / 2), at(w * 0.5, h / 2), at(w * 0.7, h / 2)],
        outside: [at(2, 2), at(w - 3, h - 3), at(w / 2, 4)],
      };
    });
    expect(alpha.size).toEqual([480, 320]);
    expect(alpha.under).toEqual([0, 0, 0]);
    expect(alpha.outside).toEqual([255, 255, 255]);
    const { overflow } = await screenshots(page, "mask", { fullPage: true });
    expect(
      Object.values(overflow).every((px) => px <= 0),
      JSON.stringify(overflow),
    ).toBe(true);
  }, 120_000);

  it("the gallery shows the uploaded image from the asset list, with its bytes and a link to mask it", async () => {
    const list = (await (await fetch(`${base}/api/assets?limit=100`, { headers: { "X-API-Key": KEY } })).json()) as { total: number };
    await page.goto(`${base}/ui/gallery`);
    const tile = `.tile[data-hash="${imageHash}"]`;
    await page.waitForSelector(`${tile} img[src^="blob:"]`);
    expect(await page.$eval("[data-testid=gallery-count]", (m) => m.textContent)).toBe(`${list.total} assets`);
    expect(await page.$$eval(`${tile} a`, (as) => as.map((a) => a.getAttribute("href")))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\/ui\/mask\?asset=/)]),
    );
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
    expect(tiles[0]).toContain("3 kB · application/octet-stream");
    expect(await page.$eval("[data-testid=gallery-count]", (m) => m.textContent)).toBe('1 asset tagged "gallery-models"');
    // A tag chip filters by that tag; "Show all" clears it.
    await page.click(".tile .chip:nth-child(1)");
    await waitFor(`location.search === "?tag=models"`);
    await page.click(".gallery-filter button.link");
    await waitFor(`location.search === "" && document.querySelectorAll(".tile").length > 1`);
  }, 60_000);

  it("the API's refusal in its own words: 413 for a file over the limit", async () => {
    await page.goto(`${base}/ui/upload`);
    const big = join(dataDir, "big.png");
    const bytes = await noiseImage(700, 700);
    expect(bytes.length).toBeGreaterThan(MAX_UPLOAD);
    await writeFile(big, bytes);
    await uploadThroughForm(page, big);
    // In the API's words: the one-request upload's "larger than ...", or the tus endpoint's 413 "Maximum size exceeded".
    await waitFor(`/larger than|Maximum size exceeded/.test(document.querySelector("[role=alert]")?.textContent ?? "")`);
  }, 60_000);

  it("a wrong key shows the API's 401 message", async () => {
    await page.goto(`${base}/ui/upload`);
    await page.click(".key-line button");
    await page.type("#api-key", "not-the-key");
    await page.click(".key-form button[type=submit]");
    await uploadThroughForm(page, join(dataDir, "landscape.png"));
    await waitFor(`document.querySelector("[role=alert]")?.textContent?.includes("unknown API key")`);
    await page.goto(`${base}/ui/gallery`);
    await waitFor(
      `document.querySelector("[role=alert]")?.textContent?.includes("unknown API key") || document.querySelector(".gallery") !== null`,
    );
  }, 60_000);
});

/** The picture the mask test paints over (an RGB PNG, no alpha of its own). */
const PICTURE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="320">
<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#7fb2ff"/><stop offset="1" stop-color="#ffe3b3"/></linearGradient></defs>
<rect width="480" height="320" fill="url(#sky)"/><circle cx="360" cy="90" r="42" fill="#ffcf40"/>
<path d="M0 250 L120 150 L230 240 L330 170 L480 260 L480 320 L0 320 Z" fill="#3f7d4e"/>
<path d="M0 290 L160 230 L300 290 L480 250 L480 320 L0 320 Z" fill="#2c5a38"/></svg>`;
