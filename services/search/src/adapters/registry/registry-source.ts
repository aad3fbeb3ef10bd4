import { BaseSource, type LoadOptions, type Raw } from "../../ports/source-base.ts";
import { RegistryHttp } from "./http.ts";
import { MIRROR_DEFAULTS, type MirrorOptions } from "./mirror-options.ts";
import { readPackList, type PackListReport } from "./pack-list.ts";

export { describe } from "./http.ts";

/** What only a registry's read takes, beside any source's options. */
export interface RegistryLoadOptions extends LoadOptions {
  /** fetch for mirror mode (tests may pass their own agent-bound fetch); defaults to global fetch. */
  fetch?: typeof fetch;
  mirror?: MirrorOptions;
  /** What a registry's list read found (its total, the distinct packs, what is missing). */
  onListReport?: (report: PackListReport) => void;
}

/**
 * A registry's pack list as a catalog source (`pnpm reindex --source <url>`, and the list pass
 * of a mirror): every pack, read by `readPackList`, with no classes or versions. Each page is
 * retried on its own, so one 500 or one stalled answer costs one page, not the read.
 */
export class RegistryApiSource extends BaseSource<RegistryLoadOptions> {
  readonly description: string;
  readonly kind = "registry" as const;
  constructor(
    private readonly base: string,
    /** `since`: only packs updated after it. `http`: a client shared with the rest of a mirror (its requests counted there). */
    private readonly opts: { since?: string; http?: RegistryHttp } = {},
  ) {
    super();
    this.description = `registry ${base}`;
  }

  protected async *raw(opts: RegistryLoadOptions): AsyncGenerator<Raw> {
    // Our own controller, so requests still in flight stop when the read fails or is abandoned.
    const stop = new AbortController();
    const onOuterAbort = () => stop.abort(opts.signal?.reason);
    if (opts.signal?.aborted) throw opts.signal.reason;
    opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
    try {
      const http = this.opts.http ?? new RegistryHttp(this.base, { ...MIRROR_DEFAULTS, ...opts.mirror }, opts.fetch ?? fetch, stop.signal);
      const { items, report } = await readPackList(http, { since: this.opts.since, onWarning: opts.onWarning });
      opts.onListReport?.(report);
      yield* items;
    } finally {
      opts.signal?.removeEventListener("abort", onOuterAbort);
      stop.abort();
    }
  }
}
