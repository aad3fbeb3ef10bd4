/// <reference lib="dom" />
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChromium, type HTTPRequest, type Page } from "@app/testkit/chromium";
import type { CatalogStatus } from "@app/search/internal";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { openPage, screenshots, startWebStack, waitFor, WIDTHS, type WebStack } from "./web-browser-support.ts";
import { IMPACT_CLASSES, WEB_CATALOG } from "./web-catalog.ts";
import { REGISTRY_PATHS } from "../../web/src/nodes/registry-paths.ts";

/**
 * The node page as a product and the catalog's state, in Debian's chromium: a large
 * pack's versions on the first screen at both widths, its 200 classes folded and filterable,
 * the clients page, the catalog's freshness, and an empty catalog (a first mirror still running,
 * or a source that cannot be reached) said as such rather than as "no match".
 */
const chromium = await startChromium();
if (!chromium.ok) console.log(`browser tests skipped: ${chromium.reason}`);

afterAll(async () => {
  if (chromium.ok) await chromium.close();
});

const MIRROR_PACKS = Array.from({ length: 250 }, (_, i) => ({
  id: `mirror-pack-${i}`,
  name: `Mirror Pack ${i}`,
  status: "NodeStatusActive",
}));

const clean = (overflow: Record<string, number>) =>
  expect(
    Object.values(overflow).every((px) => px <= 0),
    `wider than the viewport: ${JSON.stringify(overflow)}`,
  ).toBe(true);

describe.skipIf(!chromium.ok)("node pages and the catalog's state in chromium", () => {
  let stack: WebStack | undefined;
  let page: Page;
  let errors: string[] = [];
  beforeAll(async () => {
    stack = await startWebStack({ catalog: WEB_CATALOG });
    if (chromium.ok) ({ page, errors } = await openPage(chromium.browser));
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    expect(errors).toEqual([]);
  });

  it("a large pack's versions table is on the first screen, at 1440 and at 390 px", async () => {
    for (const size of Object.values(WIDTHS)) {
      await page.setViewport(size);
      await page.goto(`${stack!.base}/ui/nodes/comfyui-impact-pack`);
      await page.waitForSelector("table.versions tbody tr");
      // With the archive check's answer on the page (its notice takes room in the install box).
      await page.waitForSelector("[data-testid=archive-problem]");
      const place = await page.$eval("table.versions tbody tr", (tr) => ({
        bottom: tr.getBoundingClientRect().bottom,
        screen: window.innerHeight,
      }));
      expect(place.bottom, `the first version row at ${size.width} px`).toBeLessThanOrEqual(place.screen);
      // The install command comes before it.
      const installTop = await page.$eval("#install", (e) => e.getBoundingClientRect().top);
      expect(installTop).toBeLessThan(place.bottom);
    }
    await page.setViewport(WIDTHS.desktop);
    clean((await screenshots(page, "node")).overflow);
  }, 120_000);

  it("its 200 classes are folded behind their count, filterable, and each opens", async () => {
    await page.goto(`${stack!.base}/ui/nodes/comfyui-impact-pack`);
    await page.waitForSelector("details.fold");
    expect(await page.$eval("details.fold", (d) => d.open)).toBe(false);
    expect(await page.$eval("#classes-h", (h) => h.textContent)).toBe(`Node classes (${IMPACT_CLASSES.length})`);
    await page.click("details.fold > summary");
    expect(await page.$$eval("li.class", (l) => l.length)).toBe(IMPACT_CLASSES.length);
    await page.type(".class-filter input", "face");
    await waitFor(page, `document.querySelectorAll("li.class").length === 1`);
    expect(await page.$eval("li.class", (l) => l.getAttribute("data-class"))).toBe("FaceDetailer");
    await page.click("li.class summary");
    await waitFor(page, `document.querySelector("li.class details")?.open === true`);
    // Its inputs and outputs as the catalog's definition gives them.
    const io = await page.$eval("li.class .class-body", (b) => ({
      inputs: Array.from(b.querySelectorAll("[data-input]")).map((r) => r.textContent),
      outputs: Array.from(b.querySelectorAll("[data-output]")).map((r) => r.textContent),
    }));
    expect(io.inputs).toEqual([
      "imageIMAGE",
      "modelMODEL",
      'guide_sizeFLOAT {"default":512,"min":64,"max":8192}',
      "detailer_hookDETAILER_HOOK optional",
    ]);
    expect(io.outputs).toEqual(["imageIMAGE", "cropped_refinedIMAGE list", "maskMASK"]);
    // A class the catalog holds by name only says so rather than showing nothing.
    await page.$eval(".class-filter input", (i) => (i.value = ""));
    await page.type(".class-filter input", "ImpactNode007");
    await waitFor(
      page,
      `document.querySelectorAll("li.class").length === 1 && document.querySelector("li.class")?.getAttribute("data-class") === "ImpactNode007"`,
    );
    await page.click("li.class summary");
    expect(await page.$eval("li.class .class-body", (b) => b.textContent ?? "")).toContain("only the class's name");
    await page.$eval(".class-filter input", (i) => i.blur());
  }, 60_000);

  it("a description's Markdown links are links, only to http(s), and its raw HTML stays text", async () => {
    await page.goto(`${stack!.base}/ui/nodes/comfyui_controlnet_aux`);
    await page.waitForSelector("[data-testid=description] a");
    const links = await page.$$eval("[data-testid=description] a", (as) =>
      as.map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("rel")]),
    );
    expect(links).toEqual([
      ["the preprocessors", "https://github.com/Fannovel16/comfyui_controlnet_aux#readme", "noopener noreferrer nofollow"],
    ]);
    const text = await page.$eval("[data-testid=description]", (p) => p.textContent ?? "");
    expect(text).toContain("<b>not</b> [this](javascript:alert(1))");
    expect(await page.$$eval("[data-testid=description] b", (b) => b.length)).toBe(0);
    clean((await screenshots(page, "node-markdown")).overflow);
  }, 60_000);

  it("a version whose archive this instance does not hold, with upstream unreachable, says so where it is offered; a click opens no JSON 503", async () => {
    await page.goto(`${stack!.base}/ui/nodes/comfyui-impact-pack`);
    await page.waitForSelector("[data-testid=archive-problem]");
    expect(await page.$eval("[data-testid=archive-problem]", (p) => p.textContent ?? "")).toMatch(
      /The archive of 8\.8\.1 is not held here, and its upstream cannot be reached now: installing or downloading it fails until it can/,
    );
    expect(await page.$eval("tr[data-version='8.8.1'] .archive-problem", (s) => s.textContent)).toBe("archive unavailable now");
    // Another version's download, asked on click: the row says so, and the page stays.
    const at = page.url();
    await page.click("tr[data-version='8.7.0'] a.download");
    await page.waitForSelector("tr[data-version='8.7.0'] .archive-problem");
    expect(page.url()).toBe(at);
    expect(await page.$eval("body", (b) => b.textContent ?? "")).not.toContain("archive_unavailable");
    clean((await screenshots(page, "node-archive-unavailable")).overflow);
  }, 120_000);

  it("the banned and the deleted-only pages, and the clients page, at both widths in both schemes", async () => {
    await page.goto(`${stack!.base}/ui/nodes/banned-pack`);
    await page.waitForSelector("[data-testid=pack-status]");
    await page.waitForSelector("[data-testid=versions-error]");
    clean((await screenshots(page, "node-banned")).overflow);
    await page.goto(`${stack!.base}/ui/nodes/deleted-only-pack`);
    await page.waitForSelector("[data-testid=no-install]");
    await page.waitForSelector("table.versions tbody tr");
    clean((await screenshots(page, "node-deleted")).overflow);
    await page.goto(`${stack!.base}/ui/clients`);
    await page.waitForSelector("#clients-heading");
    expect(await page.$eval("main", (m) => m.textContent ?? "")).toContain("comfy node registry-install <id>");
    // The paths to send here: every one the search service answers, as the README names them (clients-advice.test.ts).
    expect(await page.$$eval("[data-testid=registry-paths] code", (c) => c.map((e) => e.textContent))).toEqual([...REGISTRY_PATHS]);
    clean((await screenshots(page, "clients")).overflow);
  }, 120_000);

  it("the search page says how fresh the catalog is and where it came from", async () => {
    await page.goto(`${stack!.base}/`);
    await page.waitForSelector("[data-testid=catalog-line]");
    const line = await page.$eval("[data-testid=catalog-line]", (e) => e.textContent ?? "");
    expect(line).toContain(`${WEB_CATALOG.length} packs from`);
    expect(line).toContain("catalog.ndjson");
    expect(line).toMatch(/indexed (just now|\d+ minutes? ago)/);
  }, 60_000);

  it("the page follows the system's dark mode", async () => {
    await page.goto(`${stack!.base}/`);
    await page.waitForSelector("[data-testid=catalog-line]");
    const colours = async () =>
      page.evaluate(() => ({
        bg: getComputedStyle(document.documentElement).backgroundColor,
        ink: getComputedStyle(document.documentElement).color,
        scheme: getComputedStyle(document.documentElement).colorScheme,
      }));
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    const light = await colours();
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
    const dark = await colours();
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    const lightness = (rgb: string) =>
      rgb
        .match(/\d+/g)!
        .slice(0, 3)
        .map(Number)
        .reduce((a, b) => a + b, 0) / 3;
    expect(lightness(light.bg)).toBeGreaterThan(200);
    expect(lightness(dark.bg)).toBeLessThan(60);
    expect(lightness(dark.ink)).toBeGreaterThan(180);
    expect(dark.scheme).toBe("light dark");
  }, 60_000);
});

describe.skipIf(!chromium.ok)("an empty catalog in chromium", () => {
  let registry: FakeRegistry | undefined;
  const stacks: WebStack[] = [];
  let page: Page;
  beforeAll(async () => {
    if (chromium.ok) ({ page } = await openPage(chromium.browser));
  }, 60_000);
  afterAll(async () => {
    for (const s of stacks) await s.close();
    await registry?.stop();
  });

  it("during the first mirror says the catalog is empty and that the mirror is running, not 'no match'", async () => {
    // 250 packs at 100 a page: page 1 answers, pages 2 and 3 never do, so the list stays unread.
    registry = await new FakeRegistry(MIRROR_PACKS).start();
    registry.stallPage.set(2, 99);
    registry.stallPage.set(3, 99);
    const stack = await startWebStack({ env: { CATALOG_SOURCE: registry.url }, waitReady: false });
    stacks.push(stack);
    await page.goto(`${stack.base}/?q=impact`);
    await waitFor(page, `(document.querySelector("[data-testid=catalog-empty]")?.textContent ?? "").includes("reading the pack list")`);
    const text = await page.$eval("main", (m) => m.textContent ?? "");
    expect(text).toContain("The catalog is empty: the first mirror is running");
    expect(text).toContain(registry.url);
    expect(text).not.toContain("No node pack matches");
    clean((await screenshots(page, "catalog-empty")).overflow);
  }, 120_000);

  it("once the list is read, serves it and shows the mirror's progress through the versions", async () => {
    const details = await new FakeRegistry(MIRROR_PACKS).start();
    details.fault(/\/versions$/, "stall", 10_000);
    const stack = await startWebStack({ env: { CATALOG_SOURCE: details.url }, waitReady: false });
    stacks.push(stack);
    try {
      await page.goto(`${stack.base}/?q=mirror`);
      await waitFor(page, `(document.querySelector("[data-testid=catalog-line]")?.textContent ?? "").includes("reading versions")`);
      expect(await page.$eval("[data-testid=catalog-line]", (e) => e.textContent ?? "")).toMatch(
        /250 packs from .*refreshing, reading versions: \d+ of 250 packs/,
      );
      await waitFor(page, `document.querySelectorAll(".results li").length > 0`);
    } finally {
      await details.stop();
    }
  }, 120_000);

  it("once the first read's tries are used up, says when the next try is and how to serve a file or bundle, with no moving bar", async () => {
    const closed = await new FakeRegistry([]).start();
    const url = closed.url;
    await closed.stop();
    const stack = await startWebStack({ env: { CATALOG_SOURCE: url }, waitReady: false });
    stacks.push(stack);
    // The service's own /readyz, with the state a stopped first mirror leaves (its retries take
    // minutes; catalog-retry.test.ts reaches it for real): the pass failed, the next try in an hour.
    const nextAt = new Date(Date.now() + 3_600_000).toISOString();
    const stopped: Partial<CatalogStatus> = {
      state: "empty",
      source: url,
      nodes: 0,
      indexedAt: null,
      lastError: `${url}/nodes?page=1&limit=100: fetch failed (ECONNREFUSED) (after 4 tries)`,
      mirror: {
        pass: "full",
        phase: "failed",
        startedAt: new Date(Date.now() - 180_000).toISOString(),
        packs: { read: 0, total: null },
        versions: { done: 0, of: 0 },
        classes: 0,
        errors: 0,
        requests: 24,
      },
      nextTry: { at: nextAt, retrying: false, failedTries: 6 },
    };
    await page.setRequestInterception(true);
    const answer = (req: HTTPRequest) => {
      if (new URL(req.url()).pathname === "/readyz")
        void req.respond({
          status: 200,
          contentType: "application/json",
          body: JSON.stringify({ status: "ready", ready: true, catalog: stopped }),
        });
      else void req.continue();
    };
    page.on("request", answer);
    try {
      await page.goto(`${stack.base}/?q=impact`);
      await waitFor(page, `(document.querySelector("[data-testid=catalog-empty]")?.textContent ?? "").includes("next try")`);
      const text = await page.$eval("[data-testid=catalog-empty]", (m) => m.textContent ?? "");
      expect(text).toContain("The catalog is empty: the first read failed");
      expect(text).toMatch(/It stopped after 6 tries; the next try is at \d\d:\d\d \(in 1 hour\)/);
      expect(text).not.toContain("first mirror is running");
      expect(await page.$$eval("[data-testid=catalog-empty] progress", (p) => p.length)).toBe(0);
      expect(await page.$eval("[data-testid=offline-advice]", (p) => p.textContent ?? "")).toMatch(
        /CATALOG_SOURCE=demo.*CATALOG_SOURCE=\.\/nodes\.ndjson.*pnpm mirror export.*CATALOG_SOURCE=\.\/mirror\.tar/,
      );
      clean((await screenshots(page, "catalog-stopped")).overflow);
    } finally {
      page.off("request", answer);
      await page.setRequestInterception(false);
    }
  }, 120_000);

  it("with its source unreachable says so, with the reason, not 'no match'", async () => {
    const closed = await new FakeRegistry([]).start();
    const url = closed.url;
    await closed.stop();
    const stack = await startWebStack({ env: { CATALOG_SOURCE: url }, waitReady: false });
    stacks.push(stack);
    await page.goto(`${stack.base}/?q=impact`);
    await waitFor(page, `(document.querySelector("[data-testid=catalog-empty]")?.textContent ?? "").includes("The last attempt failed")`);
    const text = await page.$eval("main", (m) => m.textContent ?? "");
    expect(text).toContain("The catalog is empty");
    expect(text).not.toContain("No node pack matches");
  }, 120_000);
});
