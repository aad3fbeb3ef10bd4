import { appNodeNameTokens } from "../../domain/text.ts";
import { GrowInt32, type TermTable } from "./term-table.ts";

/** The index's app node names: each lower-cased name once, and the docs that provide it. */
export interface AppNodeNameLists {
  /** The distinct lower-cased names, numbered by first use in doc order. */
  readonly appNames: string[];
  readonly appByName: Map<string, number>;
  /** The names joined by "\n"; name i spans [appStart[i], appStart[i+1]-1). */
  readonly appText: string;
  readonly appStart: Int32Array;
  /** Name i's docs, ascending: appDocs[appDocStart[i] .. appDocStart[i+1]). */
  readonly appDocStart: Int32Array;
  readonly appDocs: Int32Array;
}

/**
 * Collects the packs' app node names while the build visits the packs in whatever order suits
 * it, then numbers and lists them as a visit in doc order would have (`finish`).
 */
export class AppNodeNames {
  private readonly idOf = new Map<string, number>();
  private readonly names: string[] = [];
  /** A name as written recurs across packs (and forks): its tokens are split and looked up once. */
  private readonly written = new Map<string, { terms: Int32Array; id: number }>();
  private readonly pairName = new GrowInt32();
  /** Per visit position, where its pack's names start in `pairName`. */
  private readonly packStart: Int32Array;

  constructor(packs: number) {
    this.packStart = new Int32Array(packs + 1);
  }

  /** Call before the names of the pack at visit position `at`. */
  startPack(at: number): void {
    this.packStart[at] = this.pairName.len;
  }

  /** Records that the current pack provides `name`; returns the term ids of its tokens. */
  add(name: string, table: TermTable): Int32Array {
    let known = this.written.get(name);
    if (!known) {
      const lower = name.toLowerCase();
      let id = this.idOf.get(lower);
      if (id === undefined) {
        id = this.names.length;
        this.idOf.set(lower, id);
        this.names.push(lower);
      }
      known = { terms: Int32Array.from(appNodeNameTokens(name), (t) => table.id(t)), id };
      this.written.set(name, known);
    }
    this.pairName.push(known.id);
    return known.terms;
  }

  /** `visitOf[d]`: the visit position of doc d. */
  finish(visitOf: Int32Array): AppNodeNameLists {
    const n = visitOf.length;
    this.packStart[n] = this.pairName.len;
    const pairs = this.pairName.a;
    const start = this.packStart;
    const renumbered = new Int32Array(this.names.length).fill(-1);
    const appNames: string[] = [];
    for (let d = 0; d < n; d++) {
      const at = visitOf[d]!;
      for (let p = start[at]!, e = start[at + 1]!; p < e; p++) {
        const id = pairs[p]!;
        if (renumbered[id] === -1) {
          renumbered[id] = appNames.length;
          appNames.push(this.names[id]!);
        }
      }
    }
    const appDocStart = new Int32Array(appNames.length + 1);
    for (let p = 0; p < this.pairName.len; p++) appDocStart[renumbered[pairs[p]!]! + 1]!++;
    for (let i = 0; i < appNames.length; i++) appDocStart[i + 1]! += appDocStart[i]!;
    const appDocs = new Int32Array(this.pairName.len);
    const cursor = appDocStart.slice(0, appNames.length);
    for (let d = 0; d < n; d++) {
      const at = visitOf[d]!;
      for (let p = start[at]!, e = start[at + 1]!; p < e; p++) appDocs[cursor[renumbered[pairs[p]!]!]!++] = d;
    }
    const appStart = new Int32Array(appNames.length + 1);
    for (let i = 0; i < appNames.length; i++) appStart[i + 1] = appStart[i]! + appNames[i]!.length + 1;
    return {
      appNames,
      appByName: new Map(appNames.map((name, i) => [name, i])),
      appText: appNames.join("\n") + "\n",
      appStart,
      appDocStart,
      appDocs,
    };
  }
}
