import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * Where `pnpm --filter @app/web build` writes the page: index.html, assets/*-<hash>.{js,css},
 * build-stats.json. Found through the package itself rather than this file's URL: the gateway's
 * image bundles this module into its own dist/main.js, where that URL points elsewhere, while
 * @app/web (with its dist/) sits in node_modules beside it.
 */
const resolveFrom = createRequire(import.meta.url);
export const webDistDir: string = join(dirname(resolveFrom.resolve("@app/web/package.json")), "dist");

/** The URL of dist/: the page lives under /ui/ (index.html also at /), so dist/assets is /ui/assets. */
export const WEB_URL_PREFIX = "/ui/";

/** The build's measured sizes (written by build.ts beside the page); `file` is relative to dist/. */
export interface WebBuildStats {
  js: { file: string; bytes: number; gzipBytes: number };
  css: { file: string; bytes: number; gzipBytes: number };
}
