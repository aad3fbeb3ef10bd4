import { dirname, join } from "node:path";
import { createRequire } from "node:module";

// Resolved through the package, not this file's place: the image bundles this module into the
// gateway's dist/main.js, far from the page, while node_modules/@app/web keeps the page's files.
/** Where `pnpm --filter @app/web build` writes the page: index.html, assets/*-<hash>.{js,css}, build-stats.json. */
export const webDistDir: string = join(dirname(createRequire(import.meta.url).resolve("@app/web/package.json")), "dist");

/** The URL of dist/: the page lives under /ui/ (index.html also at /), so dist/assets is /ui/assets. */
export const WEB_URL_PREFIX = "/ui/";

/** The build's measured sizes (written by build.ts beside the page); `file` is relative to dist/. */
export interface WebBuildStats {
  js: { file: string; bytes: number; gzipBytes: number };
  css: { file: string; bytes: number; gzipBytes: number };
}
