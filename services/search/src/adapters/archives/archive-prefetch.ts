import type { Logger } from "@app/platform";
import type { StoredNode } from "../../domain/catalog-record.ts";
import { installVersion, versionsOf } from "../../domain/versions.ts";
import type { ArchiveStore, ArchiveTarget } from "./archive-store.ts";
import { UpstreamArchiveError } from "./upstream-archive.ts";

export type PrefetchMode = "latest" | "all";

/** What /readyz shows of the archives: stored of those wanted, and those that failed every try. */
export interface PrefetchStatus {
  /** Archives the catalog's packs want stored (every pack's install-path version, or every version). */
  total: number;
  stored: number;
  failed: number;
  /** The last failures' reasons (at most 10). */
  lastErrors: string[];
}

export interface PrefetchOptions {
  mode: PrefetchMode;
  concurrency: number;
  /** Tries per archive, the first included; unreachable, timed out, 5xx and 429 are tried again. */
  attempts?: number;
  retryDelayMs?: number;
  /** How often the catalog is checked for a change. */
  pollMs?: number;
}

/** The archives a catalog wants stored: never a banned pack's or a banned version's, never one upstream has no URL for. */
export function wantedArchives(packs: readonly StoredNode[], mode: PrefetchMode): ArchiveTarget[] {
  const out: ArchiveTarget[] = [];
  for (const pack of packs) {
    if (pack.status === "NodeStatusBanned" || pack.status === "NodeStatusDeleted") continue;
    const versions = mode === "all" ? versionsOf(pack) : [installVersion(pack)];
    for (const v of versions) {
      if (!v?.version || !v.downloadUrl || v.status === "NodeVersionStatusBanned") continue;
      out.push({ id: pack.id, version: v.version, upstreamUrl: v.downloadUrl });
    }
  }
  return out;
}

/**
 * Stores the archives the catalog wants (MIRROR_ARCHIVES=latest|all) as the catalog is mirrored:
 * whenever the served catalog changes (each landing of a mirror pass, a reindex), what is not
 * stored yet is fetched, `concurrency` at a time, each tried `attempts` times with backoff.
 */
export class ArchivePrefetcher {
  private state: PrefetchStatus = { total: 0, stored: 0, failed: 0, lastErrors: [] };
  private seen = "";
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly closing = new AbortController();

  constructor(
    private readonly store: ArchiveStore,
    private readonly catalog: { version(): string; packs(): Promise<readonly StoredNode[]> },
    private readonly logger: Logger,
    private readonly opts: PrefetchOptions,
  ) {}

  status(): PrefetchStatus {
    return { ...this.state, lastErrors: [...this.state.lastErrors] };
  }

  start(): void {
    const tick = () => {
      if (this.running || this.closing.signal.aborted) return;
      const version = this.catalog.version();
      if (version === this.seen) return;
      this.seen = version;
      this.running = this.pass().finally(() => (this.running = undefined));
    };
    this.timer = setInterval(tick, this.opts.pollMs ?? 1000);
    this.timer.unref();
    tick();
  }

  /** One pass over the catalog as it is now; resolves when every wanted archive is stored or has failed. */
  async pass(): Promise<void> {
    const wanted = wantedArchives(await this.catalog.packs(), this.opts.mode);
    const state: PrefetchStatus = { total: wanted.length, stored: 0, failed: 0, lastErrors: [] };
    this.state = state;
    const todo: ArchiveTarget[] = [];
    for (const t of wanted) {
      if (await this.store.index.get(t.id, t.version)) state.stored++;
      else todo.push(t);
    }
    let next = 0;
    const worker = async () => {
      while (next < todo.length && !this.closing.signal.aborted) {
        const t = todo[next++]!;
        try {
          await this.fetchWithRetries(t);
          state.stored++;
        } catch (err) {
          if (this.closing.signal.aborted) return;
          state.failed++;
          const reason = `${t.id} ${t.version}: ${err instanceof Error ? err.message : String(err)}`;
          state.lastErrors = [...state.lastErrors, reason].slice(-10);
          this.logger.warn(
            { id: t.id, version: t.version, reason },
            "archive could not be stored; a request for it is fetched again on demand",
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, todo.length) }, worker));
    if (todo.length > 0)
      this.logger.info({ mode: this.opts.mode, total: state.total, stored: state.stored, failed: state.failed }, "archives prefetched");
  }

  private async fetchWithRetries(t: ArchiveTarget): Promise<void> {
    const attempts = this.opts.attempts ?? 3;
    for (let i = 1; ; i++) {
      try {
        await this.store.ensure(t, this.closing.signal);
        return;
      } catch (err) {
        const status = err instanceof UpstreamArchiveError ? err.status : undefined;
        const retriable = status === undefined || status >= 500 || status === 429;
        if (!retriable || i >= attempts || this.closing.signal.aborted) throw err;
        await new Promise((r) => setTimeout(r, (this.opts.retryDelayMs ?? 1000) * 2 ** (i - 1)));
      }
    }
  }

  async close(): Promise<void> {
    this.closing.abort(new Error("closing"));
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
