import { resolve } from "node:path";
import { loadConfig } from "@app/platform";
import { createArchiveBlobs } from "../adapters/archives/archive-blobs.ts";
import { exportBundle } from "../adapters/bundle/bundle-export.ts";
import { exportPrivatePacks } from "../private-packs/bundle.ts";
import { openPrivatePackStore } from "../private-packs/index.ts";

/**
 * `pnpm mirror export <bundle.tar>`: DATA_DIR's catalog (packs, versions, classes), the other
 * versions' classes it kept, every stored archive and the teams' private packs with theirs in one tar, for a network with no way out, where a service started with
 * `CATALOG_SOURCE=<bundle.tar>` serves them. The instance may be running meanwhile.
 */
const [command, out] = process.argv.slice(2);
if (command !== "export" || !out) {
  console.error("usage: pnpm mirror export <bundle.tar>   (reads DATA_DIR, the blob store of S3_* when set)");
  process.exit(2);
}
const config = loadConfig();
const blobs = await createArchiveBlobs(config);
const repo = await openPrivatePackStore(config);
try {
  const privatePacks = await exportPrivatePacks(repo);
  const target = resolve(out);
  let shown = 0;
  const r = await exportBundle(
    config.DATA_DIR,
    blobs,
    target,
    (done, of) => {
      if (done === of || done - shown >= 100) {
        shown = done;
        process.stderr.write(`archives ${done}/${of}\n`);
      }
    },
    privatePacks,
  );
  console.log(
    JSON.stringify({
      bundle: target,
      nodes: r.nodes,
      archives: r.archives,
      versionClasses: r.versionClasses,
      privatePacks: r.privatePacks,
      bytes: r.bytes,
      source: r.source,
      createdAt: r.createdAt,
    }),
  );
} catch (err) {
  console.error(`mirror export failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await blobs.close();
  await repo.close();
}
