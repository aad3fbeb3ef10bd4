import type { SearchEngine } from "../ports/search-engine.ts";
import type { MirrorNamespace } from "./domain/mirror-namespace.ts";

/** The namespace of the catalog an engine serves (the CLI's view: the mirror alone, no private packs laid over it). */
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
