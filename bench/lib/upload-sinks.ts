import { join } from "node:path";
import { repoRoot, startService, type Service } from "@app/testkit/processes";

/**
 * The upload benches' baselines, one per durability (bench/servers/upload-sink.ts), so that a
 * bench compares the service with a sink that does the same work with its bytes: the service's
 * filesystem store syncs new content before answering, so `sync` is its like.
 */
export const SINK_DURABILITIES = ["hash", "write", "sync"] as const;
export type SinkDurability = (typeof SINK_DURABILITIES)[number];

/** What each sink does, as the benches print it beside their figures. */
export const SINK_DOES: Record<SinkDurability, string> = {
  hash: "bare node:http, blake3 over the body, written nowhere",
  write: "bare node:http, blake3 + the body written to a file (page cache, no sync), renamed to its hash",
  sync: "bare node:http, blake3 + the body written to a file, fsync, linked to its hash name, directory fsync, then the answer",
};

/** A sink in its own process on a loopback port; POST, PUT or PATCH a body to any path. `dir`: where it writes (default a temporary). */
export function startSink(durability: SinkDurability, dir?: string): Promise<Service> {
  return startService(
    join(repoRoot, "bench/servers/upload-sink.ts"),
    { SINK_DURABILITY: durability, ...(dir ? { SINK_DIR: dir } : {}) },
    { readyPath: "/" },
  );
}
