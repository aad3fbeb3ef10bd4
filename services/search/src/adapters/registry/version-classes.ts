import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ComfyNode } from "@app/contracts";
import { z } from "zod";
import { RegistryHttp } from "./http.ts";
import { MIRROR_DEFAULTS } from "./mirror-options.ts";
import { readVersionClasses } from "./pack-details.ts";

/**
 * The classes of versions other than the install path's, read through from the registry on the
 * first request and kept: in memory, and under `DATA_DIR/search/version-classes/` so a
 * restart with no network still answers them. A version's classes never change once extracted.
 * Mirroring them all would cost a request per version of every pack, for versions rarely asked.
 * A mirror bundle carries the kept ones, so an instance started from it answers them too.
 */
export interface VersionClasses {
  /** The version's classes; undefined when none are kept and the registry (if any) holds none. Throws when the registry cannot be reached. */
  read(id: string, version: string): Promise<ComfyNode[] | undefined>;
  close(): void;
}

/** One version's kept classes: what each kept file holds, and a line of a bundle's `version-classes.ndjson`. */
export const KeptClasses = z.object({ id: z.string().min(1), version: z.string().min(1), classes: z.array(ComfyNode) });
export type KeptClasses = z.infer<typeof KeptClasses>;
/** Files kept before they named their version held the classes alone. */
const KeptFile = z.union([KeptClasses, z.array(ComfyNode)]);

export const versionClassesDir = (dataDir: string): string => join(dataDir, "search", "version-classes");
const keyHash = (id: string, version: string): string => createHash("sha256").update(`${id}@${version}`).digest("hex");
const KEPT_NAME = /^([0-9a-f]{64})\.json$/;

export async function keepVersionClasses(dir: string, kept: KeptClasses): Promise<void> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${keyHash(kept.id, kept.version)}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(kept));
  await rename(tmp, file);
}

async function readKeptFile(file: string): Promise<KeptClasses | ComfyNode[] | undefined> {
  const parsed = await readFile(file, "utf8").then(
    (t) => KeptFile.safeParse(JSON.parse(t)),
    () => undefined,
  );
  return parsed?.success ? parsed.data : undefined;
}

/**
 * Every version's classes kept under `dir`. A file in the older form (the classes alone) is named
 * by the hash of its `id@version` only: `versionsOf` lists the versions it may be (the catalog's).
 */
export async function* allKeptVersionClasses(
  dir: string,
  versionsOf: () => Promise<Iterable<{ id: string; version: string }>>,
): AsyncGenerator<KeptClasses> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw err;
  });
  let byHash: Map<string, { id: string; version: string }> | undefined;
  for (const name of names.sort()) {
    const hash = KEPT_NAME.exec(name)?.[1];
    const kept = hash ? await readKeptFile(join(dir, name)) : undefined;
    if (!hash || !kept) continue;
    if (!Array.isArray(kept)) {
      yield kept;
      continue;
    }
    byHash ??= new Map([...(await versionsOf())].map((k) => [keyHash(k.id, k.version), k]));
    const key = byHash.get(hash);
    if (key) yield { ...key, classes: kept };
  }
}

/** A client waits for one read through at most this long: a few tries, never a hang. */
const READ_THROUGH = { ...MIRROR_DEFAULTS, attempts: 2, retryDelayMs: 200, headersTimeoutMs: 5_000, bodyTimeoutMs: 10_000 };

/** The kept classes, and, when a registry is mirrored, the ones not yet kept read through from it. */
export class KeptVersionClasses implements VersionClasses {
  private readonly held = new Map<string, ComfyNode[]>();
  private readonly pending = new Map<string, Promise<ComfyNode[] | undefined>>();
  private readonly closing = new AbortController();
  private readonly http?: RegistryHttp;

  constructor(
    private readonly dir: string,
    registry?: string,
    doFetch: typeof fetch = fetch,
  ) {
    if (registry) this.http = new RegistryHttp(registry, READ_THROUGH, doFetch, this.closing.signal);
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
    const kept = await readKeptFile(join(this.dir, `${keyHash(id, version)}.json`));
    // The hash names the file; the id and version it holds (when it says) must agree.
    const classes = Array.isArray(kept) ? kept : kept?.id === id && kept.version === version ? kept.classes : undefined;
    if (classes) {
      this.held.set(key, classes);
      return classes;
    }
    if (!this.http) return undefined;
    const read = await readVersionClasses(this.http, id, version);
    if (!read) return undefined;
    this.held.set(key, read);
    await keepVersionClasses(this.dir, { id, version, classes: read });
    return read;
  }
}
