import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ComfyNode } from "@app/contracts";
import { z } from "zod";
import { RegistryHttp } from "./http.ts";
import { MIRROR_DEFAULTS } from "./mirror-options.ts";
import { readVersionClasses } from "./pack-details.ts";

/**
 * The classes of versions other than the install path's, read through from the registry on the
 * first request and kept (issue 24): in memory, and under `DATA_DIR/search/version-classes/` so a
 * restart with no network still answers them. A version's classes never change once extracted.
 * Mirroring them all would cost a request per version of every pack, for versions rarely asked.
 */
export interface VersionClasses {
  /** The version's classes; undefined when the registry holds none (or no registry is mirrored). Throws when the registry cannot be reached. */
  read(id: string, version: string): Promise<ComfyNode[] | undefined>;
}

const Stored = z.array(ComfyNode);
/** A client waits for one read through at most this long: a few tries, never a hang. */
const READ_THROUGH = { ...MIRROR_DEFAULTS, attempts: 2, retryDelayMs: 200, headersTimeoutMs: 5_000, bodyTimeoutMs: 10_000 };

export class RegistryVersionClasses implements VersionClasses {
  private readonly held = new Map<string, ComfyNode[]>();
  private readonly pending = new Map<string, Promise<ComfyNode[] | undefined>>();
  private readonly closing = new AbortController();
  private readonly http: RegistryHttp;

  constructor(
    registry: string,
    private readonly dir: string,
    doFetch: typeof fetch = fetch,
  ) {
    this.http = new RegistryHttp(registry, READ_THROUGH, doFetch, this.closing.signal);
  }

  async read(id: string, version: string): Promise<ComfyNode[] | undefined> {
    const key = `${id}@${version}`;
    const hit = this.held.get(key);
    if (hit) return hit;
    let p = this.pending.get(key);
    if (!p) {
      p = this.load(id, version, key).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }

  close(): void {
    this.closing.abort(new Error("closing"));
  }

  private async load(id: string, version: string, key: string): Promise<ComfyNode[] | undefined> {
    const file = join(this.dir, `${createHash("sha256").update(key).digest("hex")}.json`);
    const kept = await readFile(file, "utf8").then((t) => Stored.safeParse(JSON.parse(t)), () => undefined);
    if (kept?.success) {
      this.held.set(key, kept.data);
      return kept.data;
    }
    const classes = await readVersionClasses(this.http, id, version);
    if (!classes) return undefined;
    this.held.set(key, classes);
    await mkdir(this.dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(classes));
    await rename(tmp, file);
    return classes;
  }
}
