/// <reference lib="dom" />
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Asset } from "@app/contracts";
import { blake3Hex, pool } from "@app/testkit/assets";
import { startChromium, type ElementHandle, type Page } from "@app/testkit/chromium";
import { openPage, screenshots, startWebStack, useKey, waitFor, WEB_KEY as KEY, WIDTHS, type WebStack } from "./web-browser-support.ts";

/**
 * The asset pages as a product, in Debian's chromium against the embedded stack: a
 * gallery of 300 assets reached to the last, each opened, downloaded, renamed, re-tagged and
 * deleted from the page; whole names with their extensions; the same bytes shown as the same
 * content; a mask from any image in the store; and a .safetensors upload with its settings
 * chosen first and its progress shown.
 */
const chromium = await startChromium();
if (!chromium.ok) console.log(`browser tests skipped: ${chromium.reason}`);

const LONG_NAME = "juggernaut-xl-v9-rundiffusionphoto-2-lightning-4steps-with-a-very-long-name-indeed.safetensors";
const LONG_TAG = "a-tag-that-is-much-longer-than-any-card-is-wide-and-must-stay-inside-it";

describe.skipIf(!chromium.ok)("the gallery, uploads and the mask picker in chromium", () => {
  let stack: WebStack | undefined;
  let page: Page;
  let errors: string[] = [];
  let downloads: string;
  let oldest: Asset;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${stack!.base}${path}`, { ...init, headers: { "X-API-Key": KEY, ...init.headers } });
  async function upload(name: string, bytes: Buffer | Uint8Array, tags: string[]): Promise<Asset> {
    const form = new FormData();
    form.append("tags", JSON.stringify(tags));
    form.append("name", name);
    form.append("file", new Blob([new Uint8Array(bytes)]), name);
    const res = await api("/api/assets", { method: "POST", body: form });
    if (res.status !== 201 && res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    return (await res.json()) as Asset;
  }
  const tile = (id: string) => `.tile[data-id="${id}"]`;

  beforeAll(async () => {
    stack = await startWebStack();
    downloads = await mkdtemp(join(tmpdir(), "web-downloads-"));
    // 300 assets, oldest first: a note, then 295 more notes, two records of one picture, a
    // picture whose name is not its hash, a model with a long name, and one with a long tag.
    oldest = await upload("note-000.txt", Buffer.from("the oldest note\nsecond line\n"), ["input", "notes"]);
    await pool(295, 6, (i) =>
      upload(`note-${String(i + 1).padStart(3, "0")}.txt`, Buffer.from(`note number ${i + 1}\n`), ["input", "notes"]),
    );
    const red = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#c0392b" } })
      .png()
      .toBuffer();
    await upload("red.png", red, ["input", "pictures"]);
    await upload("red-again.png", red, ["input", "pictures"]);
    await upload(LONG_NAME, new Uint8Array(123_456).fill(3), ["models", "model_type:checkpoints"]);
    await upload("tagged.txt", Buffer.from("tagged\n"), ["input", LONG_TAG]);
    if (chromium.ok) {
      ({ page, errors } = await openPage(chromium.browser));
      const cdp = await page.createCDPSession();
      await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
      await useKey(page, stack.base);
    }
  }, 180_000);

  afterAll(async () => {
    if (chromium.ok) await chromium.close();
    await stack?.close();
    await rm(downloads, { recursive: true, force: true });
    expect(errors).toEqual([]);
  });

  it("reaches the 300th asset by scrolling, a page of 100 at a time", async () => {
    await page.goto(`${stack!.base}/ui/gallery`);
    await waitFor(page, `document.querySelectorAll(".tile").length === 100`);
    expect(await page.$eval("[data-testid=gallery-count]", (e) => e.textContent)).toBe("300 assets · showing 100");
    for (let i = 0; i < 20 && (await page.$$(".tile")).length < 300; i++) {
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await new Promise((r) => setTimeout(r, 300));
    }
    await waitFor(page, `document.querySelectorAll(".tile").length === 300`);
    expect(await page.$eval(".gallery .tile:last-child", (t) => t.getAttribute("data-id"))).toBe(oldest.id);
    expect(await page.$eval(".list-end", (e) => e.textContent)).toContain("every asset is shown");
    // Keyboard: "Load more" is a button, and the tiles' actions are buttons and links.
    expect(await page.$eval(`${tile(oldest.id)} .tile-open`, (b) => b.tagName)).toBe("BUTTON");
  }, 120_000);

  it("shows whole names with their extensions, sizes in units, long tags inside their card, the same bytes as the same content, and Mask on every image", async () => {
    await page.goto(`${stack!.base}/ui/gallery`);
    await waitFor(page, `document.querySelectorAll(".tile").length === 100`);
    const model = await page.$eval(`.tile[data-name="${LONG_NAME}"]`, (t) => {
      const card = t.getBoundingClientRect();
      const ext = t.querySelector(".tile-title .ext")!.getBoundingClientRect();
      return {
        ext: t.querySelector(".tile-title .ext")!.textContent,
        extInside: ext.right <= card.right + 0.5 && ext.width > 0,
        title: t.querySelector(".file-name")!.getAttribute("title"),
        text: t.textContent,
      };
    });
    expect(model).toMatchObject({ ext: ".safetensors", extInside: true, title: LONG_NAME });
    // The whole name is on the card, wrapped onto more lines and never cut, at both widths.
    for (const size of Object.values(WIDTHS)) {
      await page.setViewport(size);
      const shown = await page.$eval(`.tile[data-name="${LONG_NAME}"] .tile-title`, (title) => {
        const card = title.closest(".tile")!.getBoundingClientRect();
        const range = document.createRange();
        range.selectNodeContents(title);
        const lines = Array.from(range.getClientRects()).filter((r) => r.width > 0);
        const stem = getComputedStyle(title.querySelector(".stem")!);
        return {
          text: title.textContent,
          inside: lines.every((r) => r.left >= card.left - 0.5 && r.right <= card.right + 0.5),
          lines: new Set(lines.map((r) => Math.round(r.top))).size,
          cut: stem.textOverflow === "ellipsis" && stem.overflow !== "visible",
        };
      });
      expect({ size: size.width, ...shown, lines: shown.lines > 1 }).toEqual({
        size: size.width,
        text: LONG_NAME,
        inside: true,
        lines: true,
        cut: false,
      });
    }
    await page.setViewport(WIDTHS.desktop);
    expect(model.text).toContain("123 kB · application/octet-stream");
    expect(model.text).not.toContain("0.0 kB");
    const chip = await page.$eval(`.tile[data-name="tagged.txt"]`, (t) => {
      const card = t.getBoundingClientRect();
      const c = Array.from(t.querySelectorAll(".chip"))
        .find((x) => x.textContent.startsWith("a-tag"))!
        .getBoundingClientRect();
      return { left: c.left >= card.left, right: c.right <= card.right + 0.5 };
    });
    expect(chip).toEqual({ left: true, right: true });
    const reds = await page.$$eval(`.tile[data-name^="red"]`, (ts) =>
      ts.map((t) => ({
        hash: t.getAttribute("data-hash"),
        same: t.querySelector("[data-testid=same-content]")?.textContent,
        mask: t.querySelector("a[href^='/ui/mask?asset=']") !== null,
      })),
    );
    expect(reds).toHaveLength(2);
    expect(reds[0]!.hash).toBe(reds[1]!.hash);
    expect(reds.map((r) => [r.same, r.mask])).toEqual([
      ["same bytes ×2", true],
      ["same bytes ×2", true],
    ]);
    // Every image can be masked, whatever its name; a note cannot.
    expect(
      await page.$$eval(
        ".tile",
        (ts) => ts.filter((t) => t.querySelector("img, .img-placeholder") && !t.querySelector("a[href^='/ui/mask']")).length,
      ),
    ).toBe(0);
    await page.waitForSelector(`.tile[data-name="red.png"] img[src^="blob:"]`);
    const { overflow } = await screenshots(page, "gallery");
    expect(
      Object.values(overflow).every((px) => px <= 0),
      JSON.stringify(overflow),
    ).toBe(true);
  }, 120_000);

  it("a wrong key shows only its error: no count of 0 assets, no 'Nothing here yet'", async () => {
    await useKey(page, stack!.base, "not-a-key-of-this-server");
    try {
      await page.goto(`${stack!.base}/ui/gallery`);
      await page.waitForSelector(".error[role=alert]");
      expect(await page.$eval(".error[role=alert]", (e) => e.textContent ?? "")).toMatch(/key/i);
      expect(await page.$(".error[role=alert] button.link")).not.toBeNull(); // Enter another key
      const shown = await page.$eval("main", (m) => m.textContent ?? "");
      expect(await page.$("[data-testid=gallery-count]")).toBeNull();
      expect(await page.$(".empty")).toBeNull();
      expect(shown).not.toContain("Nothing here yet");
      expect(await page.$$(".tile")).toHaveLength(0);
      await screenshotsOf(page, "gallery-wrong-key");
    } finally {
      await useKey(page, stack!.base);
    }
  }, 60_000);

  it("filters by name and by tag", async () => {
    await page.goto(`${stack!.base}/ui/gallery`);
    await page.waitForSelector(".gallery-filter");
    await page.type(".gallery-filter input[name=name]", "red");
    await page.click(".gallery-filter button[type=submit]");
    await waitFor(page, `document.querySelectorAll(".tile").length === 2`);
    expect(new URL(page.url()).searchParams.get("name")).toBe("red");
    await page.goto(`${stack!.base}/ui/gallery?tag=models`);
    await waitFor(page, `document.querySelectorAll(".tile").length === 1`);
    expect(await page.$eval("[data-testid=gallery-count]", (e) => e.textContent)).toBe('1 asset tagged "models"');
  }, 60_000);

  it("opens an image full size, a note as text and a model as its record", async () => {
    await page.goto(`${stack!.base}/ui/gallery?name=red.png`);
    await page.waitForSelector(".tile");
    await page.click(".tile .tile-open");
    await page.waitForSelector("dialog.viewer[open] img[data-testid=full-image]");
    expect(await page.$eval("img[data-testid=full-image]", (i) => [i.naturalWidth, i.naturalHeight])).toEqual([64, 48]);
    const { overflow } = await screenshots(page, "gallery-open");
    expect(
      Object.values(overflow).every((px) => px <= 0),
      JSON.stringify(overflow),
    ).toBe(true);
    await page.keyboard.press("Escape");
    await waitFor(page, `!document.querySelector("dialog.viewer")`);

    await page.goto(`${stack!.base}/ui/gallery?name=note-000`);
    await page.waitForSelector(".tile");
    await page.click(".tile .tile-open");
    await waitFor(page, `document.querySelector("[data-testid=text-preview]")?.textContent === "the oldest note\\nsecond line\\n"`);
    await page.click("dialog.viewer .viewer-head button");

    await page.goto(`${stack!.base}/ui/gallery?tag=models`);
    await page.waitForSelector(".tile");
    await page.click(".tile .tile-open");
    await page.waitForSelector("dialog.viewer[open] [data-testid=no-preview]");
    const facts = await page.$eval("[data-testid=asset-facts]", (d) => d.textContent ?? "");
    expect(facts).toContain("123 kB (123,456 bytes)");
    expect(facts).toContain("blake3:");
    expect(await page.$eval("dialog.viewer button.copy", (b) => b.dataset.copy)).toMatch(/^blake3:[0-9a-f]{64}$/);
  }, 60_000);

  it("works from the keyboard: a tile opens with Enter, the dialog keeps focus and Escape closes it", async () => {
    await page.goto(`${stack!.base}/ui/gallery?name=red.png`);
    await page.waitForSelector(".tile .tile-open");
    await page.focus(".tile .tile-open");
    await page.keyboard.press("Enter");
    await page.waitForSelector("dialog.viewer[open]");
    expect(await page.evaluate(() => document.activeElement?.closest("dialog") !== null)).toBe(true);
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.closest("dialog.viewer") !== null), "Tab stays in the dialog").toBe(true);
    }
    await page.keyboard.press("Escape");
    await waitFor(page, `!document.querySelector("dialog.viewer")`);
  }, 60_000);

  it("downloads, renames, re-tags and (after confirming) deletes an asset from the page", async () => {
    await page.goto(`${stack!.base}/ui/gallery?name=note-007`);
    await page.waitForSelector(".tile");
    const id = (await page.$eval(".tile", (t) => t.getAttribute("data-id")))!;
    await page.click(".tile .tile-actions button:nth-child(2)");
    await waitFor(page, "true");
    for (let i = 0; i < 100 && !(await readdir(downloads)).includes("note-007.txt"); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await readFile(join(downloads, "note-007.txt"), "utf8")).toBe("note number 7\n");

    await page.click(".tile .tile-open");
    await page.waitForSelector("dialog.viewer[open] #rename");
    await page.$eval("#rename", (i) => ((i as HTMLInputElement).value = ""));
    await page.type("#rename", "renamed-note.md");
    await page.click("dialog.viewer .inline-form button[type=submit]");
    await waitFor(page, `document.querySelector(".tile .tile-title")?.textContent === "renamed-note.md"`);
    expect(((await (await api(`/api/assets/${id}`)).json()) as Asset).name).toBe("renamed-note.md");

    await page.type("#new-tag", "keep");
    await page.click("dialog.viewer .tag-editor button[type=submit]");
    await page.waitForSelector(`dialog.viewer [data-tag="keep"]`);
    await page.click(`dialog.viewer [data-tag="notes"] .chip-remove`);
    await waitFor(page, `!document.querySelector('dialog.viewer [data-tag="notes"]')`);
    expect(((await (await api(`/api/assets/${id}`)).json()) as Asset).tags.sort()).toEqual(["input", "keep"]);

    await page.click("dialog.viewer .danger-zone button.danger");
    expect((await api(`/api/assets/${id}`)).status, "nothing is deleted before the confirmation").toBe(200);
    await page.click("[data-testid=confirm-delete]");
    await waitFor(page, `document.querySelectorAll(".tile").length === 0 && !document.querySelector("dialog.viewer")`);
    expect((await api(`/api/assets/${id}`)).status).toBe(404);
  }, 60_000);

  it("the mask editor lists the images in the store (not only this browser's uploads) and opens one", async () => {
    if (!chromium.ok) throw new Error("the suite runs only with chromium");
    const context = await chromium.browser.createBrowserContext();
    const fresh = await context.newPage();
    try {
      await useKey(fresh, stack!.base);
      await fresh.goto(`${stack!.base}/ui/mask`);
      await fresh.waitForFunction(`document.querySelectorAll(".picker .tile").length === 2`);
      await fresh.waitForFunction(`[...document.querySelectorAll(".picker img")].length === 2`);
      await screenshotsOf(fresh, "mask-pick");
      await fresh.click(".picker .tile a");
      await fresh.waitForSelector("[data-testid=mask-canvas]");
      expect(new URL(fresh.url()).searchParams.get("asset")).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await context.close();
    }
  }, 90_000);

  it("uploads a .safetensors file from the page with its settings chosen first, showing progress (one-request fallback where the server has no tus endpoint)", async () => {
    const bytes = new Uint8Array(6 * 1024 * 1024).map((_, i) => (i * 7) & 255);
    const file = join(downloads, "tiny-lora.safetensors");
    await writeFile(file, bytes);
    // A server without the resumable endpoint, as an older one: its OPTIONS answers 404.
    await page.setRequestInterception(true);
    type Intercepted = {
      method(): string;
      url(): string;
      respond(r: { status: number; contentType: string; body: string }): Promise<void>;
      continue(): Promise<void>;
    };
    // A rejection here reaches vitest as an unhandled one, which fails the run.
    const noTus = (req: Intercepted) =>
      void (req.method() === "OPTIONS" && req.url().endsWith("/api/assets/uploads")
        ? req.respond({ status: 404, contentType: "application/json", body: '{"error":"not_found","message":"no route"}' })
        : req.continue());
    page.on("request", noTus);
    await page.goto(`${stack!.base}/ui/upload`);
    const input = (await page.waitForSelector("#asset-file")) as ElementHandle<HTMLInputElement>;
    await waitFor(page, `(document.querySelector("[data-testid=upload-mode]")?.textContent ?? "") !== ""`);
    expect(await page.$eval("[data-testid=upload-mode]", (e) => e.textContent ?? "")).toBe(
      "One-request upload: this server has no resumable endpoint.",
    );
    page.off("request", noTus);
    await page.setRequestInterception(false);
    await input.uploadFile(file);
    await page.waitForSelector("#model-type");
    expect(await page.$eval("#destination", (s) => (s as HTMLSelectElement).value)).toBe("models");
    await page.$eval("#model-type", (i) => ((i as HTMLInputElement).value = ""));
    await page.type("#model-type", "loras");
    await page.type("#extra-tags", "from-the-page");
    await page.type("#subfolder", "styles");
    expect(await page.$eval("[data-testid=tags-preview]", (e) => e.textContent)).toBe("Tags: models, model_type:loras, from-the-page");
    // Every progress figure the page shows is kept, to see that it moved.
    await page.evaluate(() => {
      const seen: number[] = ((window as unknown as { progressSeen: number[] }).progressSeen = []);
      new MutationObserver(() => {
        const p = document.querySelector<HTMLElement>("[data-testid=progress]");
        if (p) seen.push(Number(p.dataset.sent));
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await page.click(".upload-form button[type=submit]");
    await page.waitForSelector("[data-testid=uploaded-hash]");
    expect(await page.$eval("[data-testid=uploaded-hash]", (e) => e.textContent)).toBe(`blake3:${blake3Hex(Buffer.from(bytes))}`);
    const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
    expect(Math.max(...seen)).toBeGreaterThan(0);
    const id = (await page.$eval(".upload-result", (e) => e.getAttribute("data-asset")))!;
    const record = (await (await api(`/api/assets/${id}`)).json()) as Asset;
    expect(record).toMatchObject({
      name: "tiny-lora.safetensors",
      size: bytes.length,
      user_metadata: expect.objectContaining({ subfolder: "styles" }),
    });
    expect(record.tags.sort()).toEqual(["from-the-page", "model_type:loras", "models"]);
    expect(await page.$eval(".upload-result", (e) => e.textContent ?? "")).toContain("one-request upload");
    const { overflow } = await screenshots(page, "upload");
    expect(
      Object.values(overflow).every((px) => px <= 0),
      JSON.stringify(overflow),
    ).toBe(true);
  }, 120_000);

  async function screenshotsOf(p: Page, name: string) {
    const { overflow } = await screenshots(p, name);
    expect(
      Object.values(overflow).every((px) => px <= 0),
      JSON.stringify(overflow),
    ).toBe(true);
  }
});
