import type { ComponentChildren } from "preact";
import { h } from "preact";
import { Lexer, type MarkedToken, type Token } from "marked";

/**
 * Pack descriptions as their authors write them: inline Markdown (links, code, emphasis, bare
 * URLs) with line breaks kept. Safe by construction: marked only reads the text into tokens and
 * the tokens become elements here, never HTML text; raw HTML stays text, and only http(s)
 * links become links (any other target, `javascript:` included, stays as written).
 */
// marked's own token kinds only: no extension is registered, so no generic token comes.
const lex = (text: string): MarkedToken[] => Lexer.lexInline(text, { gfm: true, breaks: true }) as MarkedToken[];
const childrenOf = (t: { tokens?: Token[] }): MarkedToken[] => (t.tokens ?? []) as MarkedToken[];

const isWebLink = (href: string) => /^https?:\/\//i.test(href.trim());

/** ComfyUI-Manager's list writes links as `[a/Name](url)`: the `a/` marks a link, it is not part of the name. */
const linkText = (tokens: MarkedToken[]): MarkedToken[] => {
  const [first, ...rest] = tokens;
  return first?.type === "text" && first.text.startsWith("a/") ? [{ ...first, text: first.text.slice(2) }, ...rest] : tokens;
};

const TAGS: Record<string, string> = { strong: "strong", em: "em", del: "s" };

function render(tokens: MarkedToken[]): ComponentChildren[] {
  return tokens.map((t, key) => {
    switch (t.type) {
      case "link":
        return isWebLink(t.href)
          ? h("a", { key, href: t.href, rel: "noopener noreferrer nofollow", target: "_blank" }, ...render(linkText(childrenOf(t))))
          : t.raw;
      case "codespan":
        return h("code", { key }, t.text);
      case "br":
        return h("br", { key });
      case "strong":
      case "em":
      case "del":
        return h(TAGS[t.type]!, { key }, ...render(childrenOf(t)));
      case "text":
        return t.tokens ? render(childrenOf(t)) : t.text;
      case "escape":
      case "image":
        return t.text;
      default:
        // Raw HTML among them: shown as the author wrote it.
        return t.raw;
    }
  });
}

/** The description as elements: links open in a new tab, with no referrer and no opener. */
export function MarkdownText({ text }: { text: string }): ComponentChildren {
  return render(lex(text));
}

/** The same description as plain text (a link's text without its target), for a result card whose title is already a link. */
export function markdownPlainText(text: string): string {
  const plain = (tokens: MarkedToken[]): string =>
    tokens
      .map((t) => {
        if (t.type === "link") return isWebLink(t.href) ? plain(linkText(childrenOf(t))) : t.raw;
        if (t.type === "br") return "\n";
        if (t.type === "strong" || t.type === "em" || t.type === "del" || (t.type === "text" && t.tokens)) return plain(childrenOf(t));
        if (t.type === "codespan" || t.type === "escape" || t.type === "image" || t.type === "text") return t.text;
        return t.raw;
      })
      .join("");
  return plain(lex(text));
}
