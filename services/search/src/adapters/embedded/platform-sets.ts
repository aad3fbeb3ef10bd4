import { platformKey } from "../../domain/platform-values.ts";

/**
 * The distinct supported_os (or supported_accelerators) lists of the packs: docs share a
 * handful, so each doc holds one set id. Packs may be added in any order; `finish` numbers the
 * sets by first use in doc order.
 */
export class PlatformSets {
  private readonly idOfKey = new Map<string, number>();
  private readonly sets: string[][] = [];
  private readonly setOf: Uint32Array;
  // A list as written names its set for every later pack that writes it the same way, so the
  // key (levels, synonyms, sorted) is built once per distinct list, not per pack.
  private readonly writtenOne = new Map<string, number>();
  private readonly writtenMany = new Map<string, number>();

  constructor(docs: number) {
    this.setOf = new Uint32Array(docs);
  }

  add(d: number, values: string[] | undefined): void {
    this.setOf[d] = this.idOf(values);
  }

  private idOf(values: string[] | undefined): number {
    if (!values || values.length === 0) {
      // Most nodes declare nothing: one shared open set, found without building a key.
      const open = this.idOfKey.get("");
      if (open !== undefined) return open;
    }
    const list = values ?? [];
    // One value (most lists) is its own name; other lists are named by their JSON.
    const names = list.length === 1 ? this.writtenOne : this.writtenMany;
    const name = list.length === 1 ? list[0]! : JSON.stringify(list);
    let id = names.get(name);
    if (id !== undefined) return id;
    const key = list.map(platformKey).sort().join("\n");
    id = this.idOfKey.get(key);
    if (id === undefined) {
      id = this.sets.length;
      this.idOfKey.set(key, id);
      this.sets.push(list);
    }
    names.set(name, id);
    return id;
  }

  finish(): { setOf: Uint32Array; sets: string[][] } {
    const renumbered = new Int32Array(this.sets.length).fill(-1);
    const sets: string[][] = [];
    for (let d = 0; d < this.setOf.length; d++) {
      const id = this.setOf[d]!;
      if (renumbered[id] === -1) {
        renumbered[id] = sets.length;
        sets.push(this.sets[id]!);
      }
      this.setOf[d] = renumbered[id]!;
    }
    return { setOf: this.setOf, sets };
  }
}
