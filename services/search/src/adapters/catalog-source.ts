import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import { parseCatalogRecord, type StoredNode } from "../domain/catalog-record.ts";

export interface LoadProgress {
  read: number;
  indexed: number;
  skipped: number;
}

export interface BadRecord {
  /** 1-based line number (NDJSON), element number (JSON array) or `page P item I` (mirror). */
  where: string;
  reason: string;
}

export interface LoadOptions {
  onBadRecord?: (bad: BadRecord) => void;
  onProgress?: (p: LoadProgress) => void;
  /** How often (in records read) progress is reported; it is always reported at the end. */
  progressEvery?: number;
  /** fetch for mirror mode (tests may pass their own agent-bound fetch); defaults to global fetch. */
  fetch?: typeof fetch;
  mirrorPageSize?: number;
}

/**
 * Where catalog records come from: an NDJSON file, a JSON array file, or an http(s) URL of a
 * registry-compatible API (mirror mode). Bad records are reported and skipped; a duplicate id
 * keeps its first record. Only an unreadable source (missing file, unreachable server) throws.
 */
export interface CatalogSource {
  readonly description: string;
  records(opts?: LoadOptions): AsyncGenerator<StoredNode>;
}

export function catalogSource(source: string): CatalogSource {
  if (/^https?:\/\//i.test(source)) return new RegistryApiSource(source);
  return new FileSource(source);
}

/** Read a whole source into memory, with counts. */
export async function loadCatalog(source: string | CatalogSource, opts: LoadOptions = {}): Promise<{ records: StoredNode[]; progress: LoadProgress }> {
  const src = typeof source === "string" ? catalogSource(source) : source;
  const records: StoredNode[] = [];
  let last: LoadProgress = { read: 0, indexed: 0, skipped: 0 };
  for await (const r of src.records({ ...opts, onProgress: (p) => { last = p; opts.onProgress?.(p); } })) records.push(r);
  return { records, progress: last };
}

type Raw = { where: string; value: unknown } | { where: string; error: string };

abstract class BaseSource implements CatalogSource {
  abstract readonly description: string;
  protected abstract raw(opts: LoadOptions): AsyncGenerator<Raw>;

  async *records(opts: LoadOptions = {}): AsyncGenerator<StoredNode> {
    const p: LoadProgress = { read: 0, indexed: 0, skipped: 0 };
    const every = opts.progressEvery ?? 1000;
    const seen = new Set<string>();
    const bad = (where: string, reason: string) => {
      p.skipped++;
      opts.onBadRecord?.({ where, reason });
    };
    for await (const item of this.raw(opts)) {
      p.read++;
      if ("error" in item) bad(item.where, item.error);
      else {
        const parsed = parseCatalogRecord(item.value);
        if (!parsed.ok) bad(item.where, parsed.reason);
        else if (seen.has(parsed.record.id)) bad(item.where, `duplicate id ${JSON.stringify(parsed.record.id)} (the first record is kept)`);
        else {
          seen.add(parsed.record.id);
          p.indexed++;
          yield parsed.record;
        }
      }
      if (p.read % every === 0) opts.onProgress?.({ ...p });
    }
    opts.onProgress?.({ ...p });
  }
}

class FileSource extends BaseSource {
  readonly description: string;
  constructor(private readonly path: string) {
    super();
    this.description = `file ${path}`;
  }

  protected async *raw(): AsyncGenerator<Raw> {
    if (await this.isJsonArray()) {
      const { readFile } = await import("node:fs/promises");
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(this.path, "utf8"));
      } catch (err) {
        throw new Error(`${this.path}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      const items = doc as unknown[];
      for (let i = 0; i < items.length; i++) yield { where: `element ${i + 1}`, value: items[i] };
      return;
    }
    const lines = createInterface({ input: createReadStream(this.path, { encoding: "utf8" }), crlfDelay: Infinity });
    let n = 0;
    for await (const line of lines) {
      n++;
      if (line.trim() === "") continue;
      try {
        yield { where: `line ${n}`, value: JSON.parse(line) };
      } catch (err) {
        yield { where: `line ${n}`, error: `not valid JSON (${err instanceof Error ? err.message : String(err)})` };
      }
    }
  }

  /** A JSON array starts with `[`; anything else is read as NDJSON. */
  private async isJsonArray(): Promise<boolean> {
    const fh = await open(this.path, "r");
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      const head = buf.subarray(0, bytesRead).toString("utf8").replace(/^\uFEFF/, "").trimStart();
      return head.startsWith("[");
    } finally {
      await fh.close();
    }
  }
}

/** Mirror mode: page through `GET <base>/nodes?page=&limit=` of a registry-compatible API. */
class RegistryApiSource extends BaseSource {
  readonly description: string;
  private readonly listUrl: string;
  constructor(base: string) {
    super();
    const trimmed = base.replace(/\/+$/, "");
    this.listUrl = /\/nodes$/.test(trimmed) ? trimmed : `${trimmed}/nodes`;
    this.description = `registry ${this.listUrl}`;
  }

  protected async *raw(opts: LoadOptions): AsyncGenerator<Raw> {
    const doFetch = opts.fetch ?? fetch;
    const limit = opts.mirrorPageSize ?? 100;
    for (let page = 1, totalPages = 1; page <= totalPages; page++) {
      const url = `${this.listUrl}?page=${page}&limit=${limit}`;
      const body = await fetchJson(doFetch, url);
      const nodes = (body as { nodes?: unknown }).nodes;
      if (!Array.isArray(nodes)) throw new Error(`${url}: answer has no nodes array`);
      const tp = Number((body as { totalPages?: unknown }).totalPages);
      totalPages = Number.isInteger(tp) && tp >= 0 ? tp : nodes.length === limit ? page + 1 : page;
      for (let i = 0; i < nodes.length; i++) yield { where: `page ${page} item ${i + 1}`, value: nodes[i] };
      if (nodes.length === 0) break;
    }
  }
}

async function fetchJson(doFetch: typeof fetch, url: string, attempts = 3): Promise<unknown> {
  let lastErr: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      const res = await doFetch(url, { headers: { accept: "application/json" } });
      if (res.status >= 500) throw new Error(`${url}: HTTP ${res.status}`);
      if (!res.ok) throw Object.assign(new Error(`${url}: HTTP ${res.status}`), { permanent: true });
      return await res.json();
    } catch (err) {
      lastErr = err;
      if ((err as { permanent?: boolean }).permanent) break;
      await new Promise((r) => setTimeout(r, 200 * 2 ** i));
    }
  }
  throw lastErr instanceof Error ? lastErr : new Error(String(lastErr));
}
