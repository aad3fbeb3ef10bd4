import type { NodeVersion } from "@app/contracts";
import { PermanentHttpError, type RegistryHttp } from "./http.ts";
import { parseVersion } from "./pack-details.ts";

/** The most the registry answers a page of `/versions` with (more is a 400). */
const PAGE = 100;

export interface AllVersions {
  /** Every version read, by pack, in no particular order. */
  byPack: Map<string, NodeVersion[]>;
  /** Distinct versions read reached the registry's `total`: no page skipped one. */
  complete: boolean;
  total: number;
  distinct: number;
}

/**
 * Every version of every pack from the registry's list route (`GET /versions`, registry-backend
 * ListAllNodeVersions), 100 a page, `concurrency` pages at once: about 60 requests where asking
 * each pack costs one each. The route orders by the version text alone, and OFFSET pages over
 * ties may overlap and skip, so the distinct versions are counted against `total` and the pages
 * read again (`rereads` times) while short; the caller trusts a pack's versions from here only
 * when the whole read is complete and it holds the version the pack list names as the newest.
 * Undefined: the registry has no such route (an older one: 404, 405 or 400).
 */
export async function readAllVersions(http: RegistryHttp, concurrency: number, rereads: number): Promise<AllVersions | undefined> {
  const byId = new Map<string, NodeVersion>();
  const take = (body: unknown): number => {
    const b = body as { versions?: unknown; total?: unknown };
    if (!Array.isArray(b?.versions) || !Number.isInteger(b.total))
      throw new Error(`${http.base}/versions: answer has no versions array or total`);
    for (const raw of b.versions)
      for (const v of parseVersion(raw)) if (v.node_id && v.version) byId.set(v.id ?? `${v.node_id}@${v.version}`, v);
    return b.total as number;
  };
  let total: number;
  try {
    total = take(await http.get(pageUrl(1)));
  } catch (err) {
    if (err instanceof PermanentHttpError && [400, 404, 405].includes(err.status)) return undefined;
    throw err;
  }
  const pages = Math.ceil(total / PAGE);
  for (let pass = 0; pass <= rereads && (pass === 0 || byId.size < total); pass++) {
    let next = pass === 0 ? 2 : 1;
    const worker = async () => {
      while (next <= pages) {
        const page = next++;
        total = Math.max(total, take(await http.get(pageUrl(page))));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, pages) }, worker));
  }
  const byPack = new Map<string, NodeVersion[]>();
  for (const v of byId.values()) {
    const list = byPack.get(v.node_id!);
    if (list) list.push(v);
    else byPack.set(v.node_id!, [v]);
  }
  return { byPack, complete: byId.size >= total, total, distinct: byId.size };
}

const pageUrl = (page: number) => `/versions?page=${page}&pageSize=${PAGE}`;
