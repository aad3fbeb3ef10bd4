import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where `pnpm --filter @app/web build` writes the page: index.html, assets/*-<hash>.{js,css}, build-stats.json. */
export const webDistDir: string = join(dirname(fileURLToPath(import.meta.url)), "dist");

/** The URL of dist/: the page lives under /ui/ (index.html also at /), so dist/assets is /ui/assets. */
export const WEB_URL_PREFIX = "/ui/";

/** The build's measured sizes (written by build.ts beside the page); `file` is relative to dist/. */
export interface WebBuildStats {
  js: { file: string; bytes: number; gzipBytes: number };
  css: { file: string; bytes: number; gzipBytes: number };
}
