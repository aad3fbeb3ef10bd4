import { parseArgs } from "node:util";
import { createJobQueue } from "@app/jobs";
import { catalogSourceName, createLogger, loadConfigOver } from "@app/platform";
import type { ReindexProgressEvent } from "../catalog/reindex.ts";
import { createSearchRuntime } from "../compose.ts";
import { reindexJobId } from "../jobs/reindex-handler.ts";

/**
 * pnpm reindex [--source <file|url>] [--force]
 *
 * The source defaults to CATALOG_SOURCE (the public registry when unset); a registry is read
 * whole (a full pass: every pack, its versions and classes). A catalog that is
 * empty or less than half the size of the indexed one is refused unless --force is given.
 *
 * With REDIS_URL: enqueues `catalog.reindex` and follows the job's progress (a worker runs it).
 * Otherwise it runs the reindex here: embedded, it writes the new snapshot under DATA_DIR and
 * the running server (which polls that file) swaps the new index in; with MEILI_URL it builds
 * a fresh Meilisearch index and swaps it.
 */
const { values } = parseArgs({
  options: { source: { type: "string", short: "s" }, timeout: { type: "string" }, force: { type: "boolean" } },
  strict: true,
});
// The CLI prints its own progress: its log says only warnings unless LOG_LEVEL asks for more.
const config = loadConfigOver({ LOG_LEVEL: "warn" });
const source = values.source ?? catalogSourceName(config.CATALOG_SOURCE);
if (!source) {
  process.stderr.write("usage: pnpm reindex --source <file|url> [--force]   (CATALOG_SOURCE=none is set, so there is no default)\n");
  process.exit(2);
}
const logger = createLogger("reindex", config.LOG_LEVEL);
const force = values.force === true;
const show = (p: Partial<ReindexProgressEvent>): void =>
  void process.stdout.write(`\r${(p.phase ?? "").padEnd(8)} read ${p.read ?? 0}  indexed ${p.indexed ?? 0}  skipped ${p.skipped ?? 0}   `);

try {
  if (config.REDIS_URL) {
    const queue = createJobQueue(config, { logger });
    // A forced run must not join an unforced one of the same minute (which would refuse).
    const jobId = reindexJobId(source) + (force ? ":force" : "");
    const result = await queue.run(
      "catalog.reindex",
      { source, full: true, ...(force && { force }) },
      {
        jobId,
        timeoutMs: Number(values.timeout ?? 30 * 60_000),
        onProgress: (p) => show(p as Partial<ReindexProgressEvent>),
      },
    );
    await queue.close();
    process.stdout.write(
      `\ndone in ${result.durationMs} ms: read ${result.read}, indexed ${result.indexed}, skipped ${result.skipped} (job ${jobId})\n`,
    );
  } else {
    const search = await createSearchRuntime(config, logger, { role: "writer" });
    const result = await search.reindex(source, { force, full: true, onProgress: show });
    await search.close();
    const where =
      search.engine.kind === "embedded"
        ? `snapshot written under ${config.DATA_DIR}/search; a running server swaps it in within a few seconds`
        : `Meilisearch index ${config.MEILI_INDEX} swapped`;
    process.stdout.write(
      `\ndone in ${result.durationMs} ms: read ${result.read}, indexed ${result.indexed}, skipped ${result.skipped}; ${where}\n`,
    );
  }
} catch (err) {
  process.stderr.write(`\nreindex failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
