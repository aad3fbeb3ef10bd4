import { useEffect, useRef, useState } from "preact/hooks";
import { describeError, isAbort } from "../api/http.ts";
import { LatestRequest } from "./latest-request.ts";

export interface Loaded<T> {
  data: T | null;
  /** The key `data` answers (an older one while a newer request is in flight). */
  dataKey: string | null;
  error: string | null;
  loading: boolean;
}

/** Runs `load` whenever `key` changes and shows only the newest answer (see LatestRequest). */
export function useLatest<T>(key: string | null, load: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: null, dataKey: null, error: null, loading: key !== null });
  const latest = useRef(new LatestRequest());
  useEffect(() => {
    if (key === null) return;
    const { signal, current } = latest.current.begin();
    setState((s) => ({ ...s, loading: true }));
    load(signal).then(
      (data) => {
        if (current()) setState({ data, dataKey: key, error: null, loading: false });
      },
      (err: unknown) => {
        if (current() && !isAbort(err)) setState((s) => ({ ...s, error: describeError(err), loading: false }));
      },
    );
  }, [key]);
  useEffect(() => () => latest.current.cancel(), []);
  return state;
}
