/// <reference lib="dom" />
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Asset } from "@app/contracts";
import { blake3Hex } from "@app/testkit/assets";
import { startChromium, type ElementHandle, type Page } from "@app/testkit/chromium";
import { openPage, startWebStack, useKey, waitFor, WEB_KEY as KEY, type WebStack } from "./web-browser-support.ts";

/**
 * The upload page's resumable upload in Debian's chromium against the embedded stack's tus
 * endpoint (/api/assets/uploads): a 20 MiB .safetensors file, throttled so that Pause comes in
 * the middle; the server holds what arrived, and Resume carries on from its offset.
 */
const chromium = await startChromium();
if (!chromium.ok) console.log(`browser tests skipped: ${chromium.reason}`);

describe.skipIf(!chromium.ok)("a resumable upload from the page in chromium", () => {
  let stack: WebStack | undefined;
  let page: Page;
  let errors: string[] = [];
  let downloads: string;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${stack!.base}${path}`, { ...init, headers: { "X-API-Key": KEY, ...init.headers } });

  beforeAll(async () => {
    stack = await startWebStack();
    downloads = await mkdtemp(join(tmpdir(), "web-resumable-"));
    if (chromium.ok) {
      ({ page, errors } = await openPage(chromium.browser));
      await useKey(page, stack.base);
    }
  }, 120_000);

  afterAll(async () => {
    if (chromium.ok) await chromium.close();
    await stack?.close();
    await rm(downloads, { recursive: true, force: true });
    expect(errors).toEqual([]);
  });

  it("a .safetensors upload through the resumable (tus) endpoint shows progress and survives a pause and a resume", async () => {
    const bytes = new Uint8Array(20 * 1024 * 1024).map((_, i) => (i * 13 + (i >> 12)) & 255);
    const file = join(downloads, "resumed.safetensors");
    await writeFile(file, bytes);
    const requests: { method: string; url: string; offset: string | undefined }[] = [];
    const log = (r: { method(): string; url(): string; headers(): Record<string, string> }) => {
      if (r.url().includes("/api/assets/uploads"))
        requests.push({ method: r.method(), url: r.url(), offset: r.headers()["upload-offset"] });
    };
    page.on("request", log);
    const cdp = await page.createCDPSession();
    try {
      await page.goto(`${stack!.base}/ui/upload`);
      await waitFor(page, `(document.querySelector("[data-testid=upload-mode]")?.textContent ?? "").startsWith("Resumable upload")`);
      const input = (await page.waitForSelector("#asset-file")) as ElementHandle<HTMLInputElement>;
      await input.uploadFile(file);
      await page.waitForSelector("#model-type");
      // About 4 MB/s up, so a person (and this test) can press Pause in the middle.
      await cdp.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: 4 * 1024 * 1024,
      });
      await page.click(".upload-form button[type=submit]");
      // Past the first 8 MiB chunk: the server holds at least that much when the pause comes.
      await waitFor(page, `Number(document.querySelector("[data-testid=progress]")?.dataset.sent ?? 0) > 9 * 1024 * 1024`);
      const pause = await page.waitForSelector("xpath/.//button[text()='Pause']");
      await pause!.click();
      await page.waitForSelector("xpath/.//button[text()='Resume']");
      const pausedAt = await page.$eval("[data-testid=progress]", (p) => Number((p as HTMLElement).dataset.sent));
      expect(pausedAt).toBeLessThan(bytes.length);
      expect(await page.$eval("[data-testid=progress]", (p) => p.textContent ?? "")).toContain("Paused at");
      const uploadUrl = requests.find((r) => r.method === "PATCH")!.url;
      const held = await api(new URL(uploadUrl).pathname, { method: "HEAD", headers: { "Tus-Resumable": "1.0.0" } });
      const offset = Number(held.headers.get("Upload-Offset"));
      expect(offset).toBeGreaterThanOrEqual(8 * 1024 * 1024);
      expect(offset).toBeLessThan(bytes.length);
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      const resume = await page.waitForSelector("xpath/.//button[text()='Resume']");
      await resume!.click();
      await page.waitForSelector("[data-testid=uploaded-hash]");
      expect(await page.$eval("[data-testid=uploaded-hash]", (e) => e.textContent)).toBe(`blake3:${blake3Hex(Buffer.from(bytes))}`);
      expect(await page.$eval(".upload-result", (e) => e.textContent ?? "")).toContain("resumable upload");
      // Every name it shows keeps the model's extension, and a model offers no original_ref for a mask.
      const hex = blake3Hex(Buffer.from(bytes));
      expect(await page.$eval("[data-testid=uploaded-name]", (e) => e.textContent)).toBe("resumed.safetensors");
      expect(await page.$eval("[data-testid=stored-name]", (e) => e.textContent)).toBe(`${hex}.safetensors`);
      expect(await page.$("[data-testid=original-ref]")).toBeNull();
      // The resume asked where the upload stood and carried on from there, not from the start.
      const afterPause = requests.slice(requests.findIndex((r) => r.method === "HEAD"));
      expect(afterPause[0]?.method).toBe("HEAD");
      expect(afterPause.filter((r) => r.method === "PATCH").map((r) => Number(r.offset))[0]).toBeGreaterThanOrEqual(offset);
      expect(requests.filter((r) => r.method === "POST")).toHaveLength(1);
      const id = (await page.$eval(".upload-result", (e) => e.getAttribute("data-asset")))!;
      const record = (await (await api(`/api/assets/${id}`)).json()) as Asset;
      expect(record).toMatchObject({ name: "resumed.safetensors", size: bytes.length, hash: `blake3:${blake3Hex(Buffer.from(bytes))}` });
      expect(record.tags.sort()).toEqual(["model_type:checkpoints", "models"]);
    } finally {
      page.off("request", log);
      await cdp.detach();
    }
  }, 120_000);
});
