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
  /** Something the operator should know that skipped no record (a registry total that moved mid-mirror). */
  onWarning?: (message: string) => void;
  /** How often (in records read) progress is reported; it is always reported at the end. */
  progressEvery?: number;
  /** Stops a mirror in flight (shutdown). */
  signal?: AbortSignal;
}

/**
 * Where catalog records come from: an NDJSON file, a JSON array file, or an http(s) URL of a
 * registry-compatible API (mirror mode). Bad records are reported and skipped; a duplicate id
 * keeps its first record. Only an unreadable source (missing file, unreachable server) throws.
 */
export interface CatalogSource<O extends LoadOptions = LoadOptions> {
  readonly description: string;
  readonly kind: "file" | "registry";
  records(opts?: O): AsyncGenerator<StoredNode>;
}

export type Raw = { where: string; value: unknown } | { where: string; error: string };

/** Parses, counts and de-duplicates what a source's `raw` yields; `O`: the options its kind of source reads. */
export abstract class BaseSource<O extends LoadOptions = LoadOptions> implements CatalogSource<O> {
  abstract readonly description: string;
  abstract readonly kind: "file" | "registry";
  protected abstract raw(opts: O): AsyncGenerator<Raw>;

  async *records(opts: O = {} as O): AsyncGenerator<StoredNode> {
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

/** Read a whole source into memory, with counts. */
export async function readAllRecords<O extends LoadOptions>(
  src: CatalogSource<O>,
  opts: O = {} as O,
): Promise<{ records: StoredNode[]; progress: LoadProgress }> {
  const records: StoredNode[] = [];
  let last: LoadProgress = { read: 0, indexed: 0, skipped: 0 };
  for await (const r of src.records({
    ...opts,
    onProgress: (p: LoadProgress) => {
      last = p;
      opts.onProgress?.(p);
    },
  }))
    records.push(r);
  return { records, progress: last };
}
