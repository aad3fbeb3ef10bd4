/**
 * The node classes a pack's Python files declare, read without running them: the literal string
 * keys of `NODE_CLASS_MAPPINGS = {...}` and of `NODE_CLASS_MAPPINGS["X"] = ...`, and the
 * `node_id="X"` of the V3 API's `io.Schema(...)`. Keys built at run time (loops, imports,
 * f-strings, `.update()` with a variable) are not seen.
 */
export function nodeClassesOf(files: readonly { text: string }[]): string[] {
  const found = new Set<string>();
  for (const { text } of files) {
    for (const block of mappingLiterals(text)) for (const m of block.matchAll(KEY_RE)) found.add(m[2]!);
    for (const m of text.matchAll(ASSIGNED_KEY_RE)) found.add(m[2]!);
    for (const m of text.matchAll(V3_ID_RE)) found.add(m[2]!);
  }
  return [...found].filter((n) => n.length > 0 && n.length <= 200).sort();
}

/** A string key at the start of a dict entry: after `{` or `,` and before `:`. */
const KEY_RE = /(?:^|[{,])\s*(["'])((?:(?!\1)[^\\\n])*)\1\s*:/g;
const ASSIGNED_KEY_RE = /NODE_CLASS_MAPPINGS\s*\[\s*(["'])((?:(?!\1)[^\\\n])*)\1\s*\]\s*=/g;
const V3_ID_RE = /\bnode_id\s*=\s*(["'])((?:(?!\1)[^\\\n])*)\1/g;

/** The `{...}` literal of each `NODE_CLASS_MAPPINGS = {` (or `|= {`, `.update({`), braces balanced, comments dropped. */
function mappingLiterals(text: string): string[] {
  const blocks: string[] = [];
  const start = /NODE_CLASS_MAPPINGS\s*(?:\|?=|\.update\()\s*\{/g;
  for (const m of text.matchAll(start)) {
    let depth = 0;
    let i = m.index + m[0].length - 1;
    const from = i;
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === "#") while (i < text.length && text[i] !== "\n") i++;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) break;
    }
    blocks.push(text.slice(from, i + 1).replace(/#[^\n]*/g, ""));
  }
  return blocks;
}
