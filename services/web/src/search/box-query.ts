/**
 * What the one search box asks for. Plain words search everything (names, descriptions, node
 * class names split by camelCase, with typos tolerated); `node:` asks for a node class by name
 * (app_node_search); a pasted repository URL, or `repo:`, searches repository URLs.
 */
export type BoxQuery =
  { kind: "empty" } | { kind: "words"; text: string } | { kind: "node-class"; text: string } | { kind: "repository"; text: string };

const NODE_PREFIX = /^(node|class):\s*/i;
const REPO_PREFIX = /^repo:\s*/i;
const LOOKS_LIKE_URL = /^(https?:\/\/|www\.|(github|gitlab)\.com\/|git@)/i;

export function parseBox(raw: string): BoxQuery {
  const q = raw.trim();
  if (q === "") return { kind: "empty" };
  if (NODE_PREFIX.test(q)) {
    const text = q.replace(NODE_PREFIX, "").trim();
    return text ? { kind: "node-class", text } : { kind: "empty" };
  }
  if (REPO_PREFIX.test(q)) {
    const text = q.replace(REPO_PREFIX, "").trim();
    return text ? { kind: "repository", text } : { kind: "empty" };
  }
  if (LOOKS_LIKE_URL.test(q) && !/\s/.test(q)) return { kind: "repository", text: q };
  return { kind: "words", text: q };
}

/** One word written in CamelCase (FaceDetailer, KSamplerAdvanced): probably a node class name. */
export const looksLikeClassName = (q: BoxQuery): boolean =>
  q.kind === "words" && /^[A-Za-z][A-Za-z0-9_]*$/.test(q.text) && /[a-z][A-Z]|[A-Z]{2}[a-z]/.test(q.text);

export function boxParams(q: BoxQuery): { search?: string; app_node_search?: string; repository_url_search?: string } {
  switch (q.kind) {
    case "words":
      return { search: q.text };
    case "node-class":
      return { app_node_search: q.text };
    case "repository":
      return { repository_url_search: q.text };
    default:
      return {};
  }
}

/** The words to highlight in results, folded as the engine folds them (case and accents). */
export function highlightTerms(q: BoxQuery): string[] {
  if (q.kind === "empty") return [];
  if (q.kind === "repository") return [];
  return fold(q.text)
    .split(/[\s\-_./]+/)
    .filter((t) => t.length > 0);
}

export const fold = (s: string): string => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
