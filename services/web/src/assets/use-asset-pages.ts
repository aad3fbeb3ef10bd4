import type { Asset } from "@app/contracts";
import { useEffect, useRef, useState } from "preact/hooks";
import { listAssets, type AssetQuery } from "../api/assets.ts";
import { describeError, isAbort } from "../api/http.ts";

export interface AssetPages {
  assets: Asset[];
  /** Records matching the filters, whatever has been loaded. */
  total: number;
  /** False where the server has no asset API (GET /api/assets answered 404). */
  available: boolean;
  loading: boolean;
  error: string | null;
  hasMore: boolean;
  loadMore(): void;
  replace(asset: Asset): void;
  remove(id: string): void;
}

/**
 * The key's assets a page at a time (100), following `next_cursor` (keyset paging, stable while
 * records are added), so every asset can be reached; a new filter starts again from the newest.
 */
export function useAssetPages(key: string, filter: Pick<AssetQuery, "tag" | "name">, pageSize = 100): AssetPages {
  const [assets, setAssets] = useState<Asset[]>([]);
  const [total, setTotal] = useState(0);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [hasMore, setHasMore] = useState(false);
  const [available, setAvailable] = useState(true);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const inFlight = useRef<AbortController | null>(null);
  const generation = useRef(0);
  const filterKey = `${key}\u0000${filter.tag ?? ""}\u0000${filter.name ?? ""}`;

  const load = (after: string | undefined) => {
    inFlight.current?.abort();
    const ctrl = new AbortController();
    inFlight.current = ctrl;
    const mine = generation.current;
    setLoading(true);
    listAssets(key, { ...filter, after, limit: pageSize }, ctrl.signal).then(
      (page) => {
        if (mine !== generation.current) return;
        setLoading(false);
        setError(null);
        if (!page) return setAvailable(false);
        setAssets((prev) => {
          const seen = new Set(after ? prev.map((a) => a.id) : []);
          return [...(after ? prev : []), ...page.assets.filter((a) => !seen.has(a.id))];
        });
        setTotal(page.total);
        setCursor(page.next_cursor);
        setHasMore(page.has_more && page.next_cursor !== undefined);
      },
      (err: unknown) => {
        if (mine !== generation.current || isAbort(err)) return;
        setLoading(false);
        setError(describeError(err));
      },
    );
  };

  useEffect(() => {
    generation.current++;
    setAssets([]);
    setCursor(undefined);
    setHasMore(false);
    load(undefined);
    return () => inFlight.current?.abort();
  }, [filterKey]);

  return {
    assets,
    total,
    available,
    loading,
    error,
    hasMore,
    loadMore: () => {
      if (!loading && hasMore) load(cursor);
    },
    replace: (asset) => setAssets((list) => list.map((a) => (a.id === asset.id ? asset : a))),
    remove: (id) => {
      setAssets((list) => list.filter((a) => a.id !== id));
      setTotal((t) => Math.max(0, t - 1));
    },
  };
}
