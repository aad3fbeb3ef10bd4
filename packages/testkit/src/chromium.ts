import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import { testEnv } from "./env.ts";

export type { Browser, ElementHandle, HTTPRequest, Page } from "puppeteer-core";

/** Debian's chromium (`apt-get install chromium`): puppeteer-core drives it and never downloads a browser. */
export const CHROMIUM_PATH = testEnv.CHROMIUM_PATH;

export type Chromium = { ok: true; browser: Browser; close: () => Promise<void> } | { ok: false; reason: string };

/**
 * A headless chromium with its own throw-away profile, or the reason it could not start
 * (tests then skip with that one line rather than fail on a machine without a browser).
 */
export async function startChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH))
    return { ok: false, reason: `no chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)` };
  const userDataDir = await mkdtemp(join(tmpdir(), "chromium-profile-"));
  try {
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      userDataDir,
      timeout: 60_000,
      protocolTimeout: 120_000,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
        "--hide-scrollbars",
        "--font-render-hinting=none",
      ],
    });
    return {
      ok: true,
      browser,
      close: async () => {
        await browser.close().catch(() => undefined);
        await rm(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    return { ok: false, reason: `chromium at ${CHROMIUM_PATH} did not start: ${(err as Error).message.split("\n")[0]}` };
  }
}
