import { passesPlatformFilter } from "../../domain/platform-values.ts";
import type { IndexData } from "./build-index.ts";

/** The per-doc stamps a search marks its repository, app-node and id matches with. */
export interface FilterStamps {
  repo?: Int32Array;
  app?: Int32Array;
  ids?: Int32Array;
}

/**
 * A search's filters as one test per doc. A class rather than a closure over `compute`'s locals:
 * a closure makes every variable it captures a context slot, and the candidates' loop then
 * reloaded them per doc.
 */
export class DocFilter {
  private readonly banned: Uint8Array;
  private readonly osPass: Uint8Array | undefined;
  private readonly osSetOf: Uint32Array;
  private readonly accPass: Uint8Array | undefined;
  private readonly accSetOf: Uint32Array;
  private readonly repo: Int32Array | undefined;
  private readonly app: Int32Array | undefined;
  private readonly ids: Int32Array | undefined;

  constructor(
    D: IndexData,
    q: { includeBanned: boolean; os?: string; accelerator?: string },
    stamps: FilterStamps,
    private readonly gen: number,
  ) {
    this.includeBanned = q.includeBanned;
    this.banned = D.banned;
    this.osPass = q.os !== undefined ? Uint8Array.from(D.osSets, (s) => (passesPlatformFilter(s, q.os!, "os") ? 1 : 0)) : undefined;
    this.accPass =
      q.accelerator !== undefined
        ? Uint8Array.from(D.accSets, (s) => (passesPlatformFilter(s, q.accelerator!, "accelerator") ? 1 : 0))
        : undefined;
    this.osSetOf = D.osSetOf;
    this.accSetOf = D.accSetOf;
    this.repo = stamps.repo;
    this.app = stamps.app;
    this.ids = stamps.ids;
    this.restricted =
      this.osPass !== undefined ||
      this.accPass !== undefined ||
      this.repo !== undefined ||
      this.app !== undefined ||
      this.ids !== undefined;
  }

  readonly includeBanned: boolean;
  /** Whether anything beyond banned packs is filtered out. */
  readonly restricted: boolean;

  passes(d: number): boolean {
    if (!this.includeBanned && this.banned[d] !== 0) return false;
    if (!this.restricted) return true;
    const gen = this.gen;
    return (
      (this.osPass === undefined || this.osPass[this.osSetOf[d]!] === 1) &&
      (this.accPass === undefined || this.accPass[this.accSetOf[d]!] === 1) &&
      (this.repo === undefined || this.repo[d] === gen) &&
      (this.app === undefined || this.app[d] === gen) &&
      (this.ids === undefined || this.ids[d] === gen)
    );
  }
}
