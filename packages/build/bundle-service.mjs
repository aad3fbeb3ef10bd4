#!/usr/bin/env node
// Compiles a service's entry points (`bundle-service src/main.ts src/cli/x.ts`, run in the
// service's folder) to dist/ (`dist/main.js`, `dist/cli/x.js`), so its image runs plain
// JavaScript with `node`. The workspace packages (@app/*) export TypeScript sources, so they are
// bundled in; every npm package stays an import of node_modules (native ones must: sharp,
// blake3), which the image's hoisted `pnpm deploy` lays out flat beside dist/.
import { rm } from "node:fs/promises";
import { build } from "esbuild";

const entries = process.argv.slice(2);
if (entries.length === 0 || entries.some((e) => !/^src\/.+\.ts$/.test(e))) {
  console.error("usage: bundle-service src/<entry>.ts ...");
  process.exit(2);
}

/** Bare imports other than the workspace's own packages (and node: builtins) stay imports. */
const npmPackagesExternal = {
  name: "npm-packages-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@app/") ? undefined : { path: args.path, external: true }));
  },
};

const options = {
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  plugins: [npmPackagesExternal],
};

await rm("dist", { recursive: true, force: true });
const { metafile } = await build({
  ...options,
  metafile: true,
  entryPoints: entries.map((e) => ({ in: e, out: e.slice("src/".length, -".ts".length) })),
});

// A bundle that opens SQLite (@app/sql's sqlite-thread.ts) starts its worker thread from
// `dist/sqlite-worker.js`, beside the entry point: the worker is a module of its own.
const thread = Object.keys(metafile.inputs).find((input) => input.endsWith("sql/src/sqlite-thread.ts"));
if (thread)
  await build({ ...options, entryPoints: [{ in: thread.replace(/sqlite-thread\.ts$/, "sqlite-worker.ts"), out: "sqlite-worker" }] });
