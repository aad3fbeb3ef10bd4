/// <reference lib="dom" />
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChromium, type Page } from "@app/testkit/chromium";
import { openPage, screenshots, startWebStack, WEB_KEY, WIDTHS, type WebStack } from "./web-browser-support.ts";
import { WEB_CATALOG } from "./web-catalog.ts";
import { PACK_ZIP, publishBody } from "../../search/test/private-packs/publish-flow.ts";

/**
 * A pack a team published to this instance, as a user meets it in Debian's chromium: its search
 * result and its page say it is private and who published it, at both widths and in both schemes,
 * so it is not mistaken for a mirrored pack of the same kind.
 */
const chromium = await startChromium();
if (!chromium.ok) console.log(`browser tests skipped: ${chromium.reason}`);

afterAll(async () => {
  if (chromium.ok) await chromium.close();
});

const PACK = "team-nodes";
const PUBLISHER = { id: "team-a", name: "Team A Imaging" };

async function call(base: string, path: string, body: unknown, key?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key && { "x-api-key": key }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** A publisher, its token and one version of `PACK`, through the routes `comfy node publish` uses. */
async function publishPrivatePack(base: string): Promise<void> {
  expect((await call(base, "/publishers", PUBLISHER, WEB_KEY)).status).toBe(201);
  const token = (await call(base, `/publishers/${PUBLISHER.id}/tokens`, { name: "ci" }, WEB_KEY)).body.token;
  const started = await call(base, `/publishers/${PUBLISHER.id}/nodes/${PACK}/versions`, publishBody(token, PACK, "1.0.0"));
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const put = await fetch(started.body.signedUrl, {
    method: "PUT",
    headers: { "content-type": "application/zip" },
    body: new Uint8Array(PACK_ZIP),
  });
  expect(put.status, await put.text()).toBe(200);
}

/** What a badge and the publisher look like where they are shown, read from the rendered page. */
async function privateMarks(page: Page, within: string) {
  return page.$eval(within, (root) => {
    const badge = Array.from(root.querySelectorAll(".badge")).find((b) => b.textContent?.trim() === "private") as HTMLElement | undefined;
    const heading = root.querySelector("h1, h3")!.getBoundingClientRect();
    const box = badge?.getBoundingClientRect();
    const style = badge && getComputedStyle(badge);
    return {
      badge: badge
        ? {
            title: badge.title,
            visible: box!.width > 0 && box!.height > 0,
            insideHeading: box!.left >= heading.left - 1 && box!.right <= heading.right + 1,
            inViewport: box!.right <= window.innerWidth,
            colour: style!.color,
            background: style!.backgroundColor,
          }
        : null,
      meta: root.querySelector(".meta")?.textContent ?? "",
    };
  });
}

/** Badge text against its background, as WCAG's contrast ratio. */
function contrast(fg: string, bg: string): number {
  const lum = (rgb: string) => {
    const [r, g, b] = rgb
      .match(/[\d.]+/g)!
      .slice(0, 3)
      .map((v) => Number(v) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe.skipIf(!chromium.ok)("a team's private pack in chromium", () => {
  let stack: WebStack | undefined;
  let page: Page;
  let errors: string[] = [];
  beforeAll(async () => {
    stack = await startWebStack({ catalog: WEB_CATALOG });
    await publishPrivatePack(stack.base);
    if (chromium.ok) ({ page, errors } = await openPage(chromium.browser));
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    expect(errors).toEqual([]);
  });

  const expectMarked = async (within: string, where: string) => {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
      for (const size of Object.values(WIDTHS)) {
        await page.setViewport(size);
        const at = `${where} at ${size.width} px, ${scheme}`;
        const marks = await privateMarks(page, within);
        expect(marks.badge, at).toMatchObject({
          title: "published to this instance by its publisher, not mirrored",
          visible: true,
          insideHeading: true,
          inViewport: true,
        });
        expect(contrast(marks.badge!.colour, marks.badge!.background), at).toBeGreaterThanOrEqual(4.5);
        expect(marks.meta, at).toContain(`by ${PUBLISHER.name}`);
      }
    }
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    await page.setViewport(WIDTHS.desktop);
  };

  it("its search result carries the private badge and its publisher; a mirrored result carries no badge", async () => {
    await page.goto(`${stack!.base}/?q=team`);
    await page.waitForSelector(".results li .result-title a");
    const cards = await page.$$eval(".results li", (lis) =>
      lis.map((li) => ({
        href: li.querySelector(".result-title a")?.getAttribute("href"),
        badges: Array.from(li.querySelectorAll(".badge")).map((b) => b.textContent?.trim()),
      })),
    );
    const own = cards.find((c) => c.href === `/ui/nodes/${PACK}`);
    expect(own, JSON.stringify(cards)).toMatchObject({ badges: ["private"] });
    const index = cards.indexOf(own!);
    await expectMarked(`.results li:nth-child(${index + 1})`, "the result card");
    const shot = await screenshots(page, "private-pack-search");
    expect(
      Object.values(shot.overflow).every((px) => px <= 0),
      JSON.stringify(shot.overflow),
    ).toBe(true);

    await page.goto(`${stack!.base}/?q=impact`);
    await page.waitForSelector(".results li .result-title a");
    expect(await page.$$eval(".results li .badge", (b) => b.map((e) => e.textContent?.trim()))).not.toContain("private");
  }, 120_000);

  it("its page carries the private badge and its publisher", async () => {
    await page.goto(`${stack!.base}/?q=team`);
    await page.waitForSelector(`.results li a[href="/ui/nodes/${PACK}"]`);
    await Promise.all([page.waitForSelector("#node-heading"), page.click(`.results li a[href="/ui/nodes/${PACK}"]`)]);
    await page.waitForSelector("table.versions tbody tr");
    expect(await page.$eval("#node-heading", (h) => h.textContent)).toBe("Team Nodesprivate");
    await expectMarked("article", "the pack's page");
    const shot = await screenshots(page, "private-pack");
    expect(
      Object.values(shot.overflow).every((px) => px <= 0),
      JSON.stringify(shot.overflow),
    ).toBe(true);
  }, 120_000);
});
