import { useEffect, useRef, useState } from "preact/hooks";
import { describeError, isAbort } from "../api/http.ts";

export interface Loaded<T> {
  data: T | null;
  /** The key `data` answers (an older one while a newer request is in flight). */
  dataKey: string | null;
  error: string | null;
  loading: boolean;
}

/**
 * Runs `load` whenever `key` changes and keeps only the newest answer: the previous request
 * is aborted, and a sequence number drops any answer that still arrives after a newer request
 * started (an abort can lose the race with a response already being read).
 */
export function useLatest<T>(key: string | null, load: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: null, dataKey: null, error: null, loading: key !== null });
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    if (key === null) return;
    const ctrl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(ctrl.signal).then(
      (data) => {
        if (mine === seq.current) setState({ data, dataKey: key, error: null, loading: false });
      },
      (err: unknown) => {
        if (mine === seq.current && !isAbort(err)) setState((s) => ({ ...s, error: describeError(err), loading: false }));
      },
    );
    return () => ctrl.abort();
  }, [key]);
  return state;
}
