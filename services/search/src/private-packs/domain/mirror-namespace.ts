import type { SearchEngine } from "../../adapters/search-engine.ts";

/** What the mirrored catalog holds, compared case-insensitively: the ids a private pack may not take. */
export interface MirrorNamespace {
  holdsNode(id: string): Promise<boolean>;
  holdsPublisher(id: string): Promise<boolean>;
}

/** The namespace of the catalog an engine serves. */
export function engineNamespace(engine: SearchEngine): MirrorNamespace {
  return {
    holdsNode: async (id) => (await engine.resolveId(id)) !== undefined,
    // Publishers are known only through their packs; creating one is rare enough to read the catalog for it.
    async holdsPublisher(id) {
      const wanted = id.toLowerCase();
      return (await engine.all()).some((p) => p.publisher?.id?.toLowerCase() === wanted);
    },
  };
}
