import { useEffect, useRef } from "preact/hooks";
import { GalleryPage } from "./assets/gallery-page.tsx";
import { MaskPage } from "./assets/mask-page.tsx";
import { UploadPage } from "./assets/upload-page.tsx";
import { ClientsPage } from "./nodes/clients-page.tsx";
import { NodePage } from "./nodes/node-page.tsx";
import { onLinkClick, usePlace, type Place } from "./router.ts";
import { SearchPage } from "./search/search-page.tsx";

const TITLES: Record<string, string> = {
  "/ui/clients": "ComfyUI tools",
  "/ui/upload": "Upload",
  "/ui/mask": "Mask editor",
  "/ui/gallery": "Gallery",
};
const titleOf = (path: string): string =>
  path.startsWith("/ui/nodes/") ? decodeURIComponent(path.slice("/ui/nodes/".length)) : (TITLES[path] ?? "Search");

const NAV = [
  { href: "/", label: "Registry", match: (p: string) => p === "/" || p.startsWith("/ui/nodes/") || p === "/ui/clients" },
  { href: "/ui/upload", label: "Upload", match: (p: string) => p === "/ui/upload" },
  { href: "/ui/mask", label: "Mask", match: (p: string) => p === "/ui/mask" },
  { href: "/ui/gallery", label: "Gallery", match: (p: string) => p === "/ui/gallery" },
];

export function App() {
  const place = usePlace();
  const firstPath = useRef(place.path);
  useEffect(() => {
    document.addEventListener("click", onLinkClick);
    return () => document.removeEventListener("click", onLinkClick);
  }, []);
  // A new page (not a new query on the same page) is announced: its title, and focus on its heading.
  useEffect(() => {
    document.title = `${titleOf(place.path)} · Node registry`;
    if (place.path === firstPath.current) return;
    firstPath.current = "";
    const target = document.querySelector<HTMLElement>("main h1") ?? document.querySelector<HTMLElement>("main");
    if (target) {
      target.tabIndex = -1;
      target.focus({ preventScroll: true });
    }
  }, [place.path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          Node registry
        </a>
        <nav aria-label="Main">
          {NAV.map((n) => (
            <a key={n.href} href={n.href} aria-current={n.match(place.path) ? "page" : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
      </header>
      <main id="main">
        <Page place={place} />
      </main>
      <footer class="muted">
        JSON API: <a href="/openapi.json">/openapi.json</a> · <a href="/nodes/search">/nodes/search</a>
      </footer>
    </>
  );
}

function Page({ place }: { place: Place }) {
  const { path } = place;
  if (path === "/" || path === "/ui" || path === "/ui/" || path === "/ui/search") return <SearchPage place={place} />;
  if (path.startsWith("/ui/nodes/")) {
    const id = decodeURIComponent(path.slice("/ui/nodes/".length));
    return <NodePage key={id} id={id} />;
  }
  if (path === "/ui/clients") return <ClientsPage />;
  if (path === "/ui/upload") return <UploadPage />;
  if (path === "/ui/mask") return <MaskPage place={place} />;
  if (path === "/ui/gallery") return <GalleryPage place={place} />;
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No page at {path}. <a href="/">Search the registry</a>.
      </p>
    </section>
  );
}
