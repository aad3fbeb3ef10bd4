import { build } from "esbuild";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { gzipSync } from "node:zlib";
import { WEB_URL_PREFIX, webDistDir, type WebBuildStats } from "./dist-dir.ts";

/**
 * The page's build: one esbuild pass bundles src/main.tsx (Preact) and its CSS into
 * content-hashed files under dist/assets, then index.html is written to name them. The
 * hashes let the gateway cache assets forever; index.html itself is never cached. The gateway
 * serves dist/assets at /ui/assets (/assets is the asset API's, as in ComfyUI).
 */
const root = import.meta.dirname;
const assets = join(webDistDir, "assets");
await rm(webDistDir, { recursive: true, force: true });
await mkdir(assets, { recursive: true });

const result = await build({
  entryPoints: [join(root, "src/main.tsx")],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022", "chrome109", "firefox115", "safari16"],
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: assets,
  entryNames: "[name]-[hash]",
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs);
const jsPath = outputs.find((f) => f.endsWith(".js"));
const cssPath = outputs.find((f) => f.endsWith(".css"));
if (!jsPath || !cssPath) throw new Error(`the build made no JS or CSS: ${outputs.join(", ")}`);

async function measure(path: string) {
  const bytes = await readFile(path);
  return { file: `assets/${basename(path)}`, bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
}
const stats: WebBuildStats = { js: await measure(jsPath), css: await measure(cssPath) };

const template = await readFile(join(root, "src/index.html"), "utf8");
const html = template
  .replace("<!--css-->", `<link rel="stylesheet" href="${WEB_URL_PREFIX}${stats.css.file}">`)
  .replace("<!--js-->", `<script type="module" src="${WEB_URL_PREFIX}${stats.js.file}"></script>`);
await writeFile(join(webDistDir, "index.html"), html);
await writeFile(join(webDistDir, "build-stats.json"), `${JSON.stringify(stats, null, 2)}\n`);
console.log(
  `web: ${stats.js.file} ${(stats.js.gzipBytes / 1024).toFixed(1)} kB gzipped, ${stats.css.file} ${(stats.css.gzipBytes / 1024).toFixed(1)} kB gzipped`,
);
