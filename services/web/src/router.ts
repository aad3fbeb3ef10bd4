import { useEffect, useState } from "preact/hooks";

/**
 * A history-API router small enough to read at a glance: the URL is the state of every page
 * (query, filters, page), so a search can be shared and the back button walks it back.
 */
const CHANGE = "app:navigate";

export interface Place {
  path: string;
  params: URLSearchParams;
}

const here = (): Place => ({ path: location.pathname, params: new URLSearchParams(location.search) });

/** A new history entry (`push`) or a rewrite of the current one (`replace`, e.g. each keystroke). */
export function navigate(url: string, how: "push" | "replace" = "push"): void {
  if (url === location.pathname + location.search) return;
  history[how === "push" ? "pushState" : "replaceState"](null, "", url);
  window.dispatchEvent(new Event(CHANGE));
  if (how === "push") window.scrollTo(0, 0);
}

export function usePlace(): Place {
  const [place, setPlace] = useState(here);
  useEffect(() => {
    const update = () => setPlace(here());
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return place;
}

/** Left clicks on same-origin links stay in the page; modified clicks open tabs as usual. */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest("a");
  if (!a || a.target || a.origin !== location.origin || a.hasAttribute("download")) return;
  if (!a.pathname.startsWith("/ui/") && a.pathname !== "/") return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}

export function withParams(path: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
