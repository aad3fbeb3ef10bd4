import { useEffect, useRef, useState } from "preact/hooks";
import { searchNodes, searchUrl } from "../api/registry.ts";
import { navigate, type Place } from "../router.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { useLatest } from "../ui/use-latest.ts";
import { highlightTerms, looksLikeClassName, parseBox, type BoxQuery } from "./box-query.ts";
import { ACCELERATOR_CHOICES, OS_CHOICES, PAGE_SIZES } from "./platforms.ts";
import { CatalogLine, EmptyCatalog, useCatalogState } from "./catalog-state.tsx";
import { ResultCard } from "./result-card.tsx";
import { readSearchState, rememberSearch, searchHref, toSearchParams, type SearchState } from "./search-state.ts";

const TYPING_PAUSE_MS = 250;
const count = new Intl.NumberFormat("en");

export function SearchPage({ place }: { place: Place }) {
  const state = readSearchState(place.params);
  const [text, setText] = useState(state.q);
  const written = useRef(state.q);

  // The back button (or a shared link) changes the query under the box: show it.
  useEffect(() => {
    if (state.q !== written.current) setText(state.q);
    written.current = state.q;
  }, [state.q]);

  // Each pause in typing becomes a URL, and the URL drives the request. The first word of a
  // search gets its own history entry; the keystrokes after it rewrite that entry.
  useEffect(() => {
    if (text === state.q) return;
    const timer = setTimeout(() => {
      written.current = text;
      navigate(searchHref({ ...state, q: text, page: 1 }), state.q === "" ? "push" : "replace");
    }, TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [text, searchHref(state)]);

  useEffect(() => rememberSearch(searchHref(state)), [searchHref(state)]);

  const params = toSearchParams(state);
  const catalog = useCatalogState();
  // While the catalog fills, each count it reaches asks again (the key names the count).
  const filling = catalog?.state === "empty" ? `#catalog=${catalog.nodes}` : "";
  const result = useLatest(searchUrl(params) + filling, (signal) => searchNodes(params, signal));
  const change = (patch: Partial<SearchState>) => navigate(searchHref({ ...state, q: text, page: 1, ...patch }));
  const box = parseBox(state.q);
  const page = result.data;
  const catalogEmpty = catalog?.state === "empty" && (!page || page.total === 0);

  return (
    <section aria-labelledby="search-heading">
      <h1 id="search-heading">Find a node pack</h1>
      <form
        class="search-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          change({});
        }}
      >
        <label for="q">Search the registry</label>
        <input
          id="q"
          type="search"
          value={text}
          autoComplete="off"
          spellcheck={false}
          placeholder="impact pack · node:FaceDetailer · https://github.com/owner/repo"
          aria-describedby="q-hint"
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <BoxHint
          id="q-hint"
          box={parseBox(text)}
          onUse={(q) => {
            setText(q);
            change({ q });
          }}
        />
        <div class="filters">
          <Choice id="os" label="OS" value={state.os} options={["", ...OS_CHOICES]} onPick={(os) => change({ os })} />
          <Choice id="acc" label="Accelerator" value={state.acc} options={["", ...ACCELERATOR_CHOICES]} onPick={(acc) => change({ acc })} />
          <Choice
            id="limit"
            label="Per page"
            value={String(state.limit)}
            options={PAGE_SIZES.map(String)}
            onPick={(v) => change({ limit: Number(v) })}
          />
          <label class="check">
            <input id="banned" type="checkbox" checked={state.banned} onChange={(e) => change({ banned: e.currentTarget.checked })} />
            Include banned
          </label>
        </div>
      </form>

      <CatalogLine catalog={catalog} />
      <ErrorBox message={result.error} />
      {catalogEmpty && <EmptyCatalog catalog={catalog} />}
      <p class="total" aria-live="polite" data-testid="total" hidden={catalogEmpty}>
        {page
          ? `${count.format(page.total)} ${page.total === 1 ? "pack" : "packs"}${page.total ? ` · page ${page.page} of ${Math.max(page.totalPages, 1)}` : ""}`
          : result.loading
            ? "Searching…"
            : ""}
        {result.loading && page && <span class="muted"> · updating…</span>}
      </p>
      {page && page.nodes.length === 0 && !result.error && !catalogEmpty && (
        <p class="empty">No node pack matches. Try fewer words, or another filter.</p>
      )}
      {page && (
        <ol class="results" aria-label="Search results" start={(page.page - 1) * page.limit + 1} data-request={result.dataKey ?? undefined}>
          {page.nodes.map((n) => (
            <ResultCard key={n.id} node={n} terms={highlightTerms(box)} includeBanned={state.banned} />
          ))}
        </ol>
      )}
      {page && page.totalPages > 1 && <Pager state={{ ...state }} totalPages={page.totalPages} />}
    </section>
  );
}

/** A labelled select; the empty value reads "Any". */
function Choice({
  id,
  label,
  value,
  options,
  onPick,
}: {
  id: string;
  label: string;
  value: string;
  options: readonly string[];
  onPick: (v: string) => void;
}) {
  return (
    <label>
      {label}
      <select id={id} value={value} onChange={(e) => onPick(e.currentTarget.value)}>
        {options.map((v) => (
          <option key={v} value={v}>
            {v === "" ? "Any" : v}
          </option>
        ))}
      </select>
    </label>
  );
}

function BoxHint({ id, box, onUse }: { id: string; box: BoxQuery; onUse: (q: string) => void }) {
  if (box.kind === "node-class")
    return (
      <p id={id} class="hint">
        Node class search: packs that provide a node named like “{box.text}”.
      </p>
    );
  if (box.kind === "repository")
    return (
      <p id={id} class="hint">
        Repository search: packs whose repository URL matches “{box.text}”.
      </p>
    );
  if (looksLikeClassName(box)) {
    return (
      <p id={id} class="hint">
        Searching every field.{" "}
        <button type="button" class="link" onClick={() => onUse(`node:${box.kind === "words" ? box.text : ""}`)}>
          Search node classes named “{box.kind === "words" ? box.text : ""}” instead
        </button>
      </p>
    );
  }
  return (
    <p id={id} class="hint">
      Words search names, descriptions and node classes (typos forgiven). <code>node:Name</code> searches node classes; a pasted repository
      URL finds its pack.
    </p>
  );
}

function Pager({ state, totalPages }: { state: SearchState; totalPages: number }) {
  const prev = state.page > 1 ? searchHref({ ...state, page: state.page - 1 }) : undefined;
  const next = state.page < totalPages ? searchHref({ ...state, page: state.page + 1 }) : undefined;
  return (
    <nav class="pager" aria-label="Pages">
      {prev ? (
        <a href={prev} rel="prev">
          ← Previous
        </a>
      ) : (
        <span class="muted" aria-hidden="true">
          ← Previous
        </span>
      )}
      <span>
        Page {state.page} of {totalPages}
      </span>
      {next ? (
        <a href={next} rel="next">
          Next →
        </a>
      ) : (
        <span class="muted" aria-hidden="true">
          Next →
        </span>
      )}
    </nav>
  );
}
