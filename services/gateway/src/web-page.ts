import express, { Router, type Request, type Response } from "express";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { notFound } from "./errors.ts";

/** Hashed file names change with their content, so browsers may keep them forever. */
const ASSET_CACHE = { immutable: true, maxAge: "1y", index: false, redirect: false, fallthrough: true } as const;

/**
 * The page's own sources only: no CDN, no remote font, no inline script. Images come from blob:
 * URLs (the asset routes need the key header, so the page fetches their bytes itself), and
 * WebAssembly is compiled for the blake3 that hashes a file before its upload.
 */
const CSP =
  "default-src 'self'; img-src 'self' blob: data:; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The web page (services/web) at `/`: hashed assets under /ui/assets with a year's cache (a
 * missing one is a JSON 404, not the page), and index.html (never cached) for `/` and every page
 * under `/ui/...`, so a shared page URL opens the page. `/assets/...` is the asset API's (as in
 * ComfyUI), and everything else (/nodes, /api, probes) is left to the routes before this one.
 */
export function webPageRouter(distDir: string): Router {
  const router = Router();
  router.use("/ui/assets", express.static(join(distDir, "assets"), ASSET_CACHE), notFound);
  const index = async (_req: Request, res: Response): Promise<void> => {
    let html: Buffer;
    try {
      html = await readFile(join(distDir, "index.html"));
    } catch {
      notBuilt(res);
      return;
    }
    res.setHeader("Cache-Control", "no-cache");
    res.setHeader("Content-Security-Policy", CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.type("html").send(html);
  };
  router.get(["/", "/ui", "/ui/{*page}"], index);
  return router;
}

const HOW_TO_BUILD = "the web page is not built: run `pnpm --filter @app/web build` (pnpm start and pnpm test build it first)";

function notBuilt(res: Response): void {
  res.status(404).setHeader("Cache-Control", "no-store");
  res.format({
    html: () =>
      res.send(
        `<!doctype html><meta charset="utf-8"><title>Page not built</title><p>The ${HOW_TO_BUILD.replace("the ", "")}.</p><p>The JSON API answers: <a href="/nodes/search">/nodes/search</a>, <a href="/openapi.json">/openapi.json</a>.</p>`,
      ),
    default: () => res.json({ error: "not_found", message: HOW_TO_BUILD }),
  });
}
