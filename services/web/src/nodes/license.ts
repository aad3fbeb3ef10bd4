/**
 * A pack's license as the registry stores it: a plain name ("MIT"), or pyproject.toml's table
 * sent as JSON text (`{"file": "LICENSE"}` or `{"text": "MIT"}`). A file is linked in the
 * repository where it is a GitHub one, since the registry keeps only the file's name.
 */
export type License = { kind: "text"; text: string } | { kind: "file"; file: string; href?: string };

export function readLicense(raw: string | undefined, repository?: string): License | null {
  const value = raw?.trim();
  if (!value) return null;
  if (value.startsWith("{")) {
    try {
      const table = JSON.parse(value) as { file?: unknown; text?: unknown };
      if (typeof table.text === "string" && table.text.trim()) return { kind: "text", text: table.text.trim() };
      if (typeof table.file === "string" && table.file.trim()) {
        const file = table.file.trim();
        const repo = repository?.match(/^https:\/\/github\.com\/[^/]+\/[^/]+?(?:\.git)?\/?$/)
          ? repository.replace(/(\.git)?\/?$/, "")
          : undefined;
        return { kind: "file", file, href: repo ? `${repo}/blob/HEAD/${file.split("/").map(encodeURIComponent).join("/")}` : undefined };
      }
      return null;
    } catch {
      // not JSON after all: a name that starts with a brace
    }
  }
  return { kind: "text", text: value };
}
