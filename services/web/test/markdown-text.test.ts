import type { VNode } from "preact";
import { describe, expect, it } from "vitest";
import { markdownPlainText, MarkdownText } from "../src/ui/markdown-text.tsx";

type Child = string | VNode<{ href?: string; rel?: string; children?: unknown }>;
const render = (text: string) => MarkdownText({ text }) as Child[];
const links = (text: string) => render(text).filter((c): c is Exclude<Child, string> => typeof c !== "string" && c.type === "a");
const textOf = (c: unknown): string =>
  typeof c === "string"
    ? c
    : Array.isArray(c)
      ? c.map(textOf).join("")
      : c && typeof c === "object" && "props" in c
        ? textOf((c as VNode<{ children?: unknown }>).props.children)
        : "";

describe("a pack description's Markdown", () => {
  it("shows a link as a link, its text without ComfyUI-Manager's `a/` mark", () => {
    const [a] = links("Wrapper for [a/WanVideo](https://github.com/kijai/ComfyUI-WanVideoWrapper) models.");
    expect(a!.props.href).toBe("https://github.com/kijai/ComfyUI-WanVideoWrapper");
    expect(a!.props.rel).toContain("noopener");
    expect(textOf(a)).toBe("WanVideo");
    expect(textOf(render("Wrapper for [a/WanVideo](https://x.example/) models."))).toBe("Wrapper for WanVideo models.");
  });

  it("links bare http(s) URLs, and keeps line breaks", () => {
    expect(links("See https://example.com/docs for more").map((a) => a.props.href)).toEqual(["https://example.com/docs"]);
    expect(render("one\ntwo").some((c) => typeof c !== "string" && c.type === "br")).toBe(true);
  });

  it("never makes raw HTML, or a link to anything but http(s)", () => {
    const html = render('<script>alert(1)</script><img src=x onerror="alert(2)"> <a href="https://x.example">x</a>');
    expect(html.filter((c) => typeof c !== "string")).toEqual([]);
    expect(textOf(html)).toContain("<script>alert(1)</script>");
    for (const target of ["javascript:alert(1)", "data:text/html,<b>x</b>", "file:///etc/passwd", "ftp://x.example/a", "//x.example/a"]) {
      expect(links(`[click](${target})`), target).toEqual([]);
    }
  });

  it("in a result card is plain text: the link's text, not its syntax", () => {
    expect(markdownPlainText("Nodes for [a/WanVideo](https://x.example) and `code`.")).toBe("Nodes for WanVideo and code.");
  });
});
