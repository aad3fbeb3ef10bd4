import type { StoredNode } from "../../domain/catalog-record.ts";
import type { IndexData } from "./build-index.ts";
import { classNamesOf } from "../../domain/class-providers.ts";

/**
 * The registry read routes' lookups over one immutable index: an id by its lower case, the packs
 * of a node class, the packs of a publisher. Built on first use (most processes serve search
 * alone), once per index, in doc (popularity) order.
 */
export interface Lookups {
  idByLowerCase: Map<string, string>;
  byClass: Map<string, StoredNode[]>;
  byPublisher: Map<string, StoredNode[]>;
}

const built = new WeakMap<IndexData, Lookups>();

export function lookupsOf(data: IndexData): Lookups {
  let l = built.get(data);
  if (l) return l;
  l = { idByLowerCase: new Map(), byClass: new Map(), byPublisher: new Map() };
  for (const r of data.docs) {
    const lower = r.id.toLowerCase();
    // Two ids equal but for case: the more popular (earlier) one answers, as the first found would.
    if (!l.idByLowerCase.has(lower)) l.idByLowerCase.set(lower, r.id);
    for (const name of classNamesOf(r)) push(l.byClass, name, r);
    if (r.publisher?.id) push(l.byPublisher, r.publisher.id, r);
  }
  built.set(data, l);
  return l;
}

function push<K>(map: Map<K, StoredNode[]>, key: K, r: StoredNode): void {
  const list = map.get(key);
  if (list) list.push(r);
  else map.set(key, [r]);
}
