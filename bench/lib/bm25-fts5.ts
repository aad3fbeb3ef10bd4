import { createRequire } from "node:module";
import type { StoredNodeLike } from "./substring-search.ts";

const require = createRequire(import.meta.url);
const { Database } = require("node-sqlite3-wasm") as typeof import("node-sqlite3-wasm");

/**
 * An untuned full-text engine for comparison: SQLite FTS5 with its default tokenizer
 * (unicode61) and bm25() with every column weighted alike, over the same fields ours searches;
 * the query's words quoted and joined with OR, best bm25 first.
 */
export class Fts5Bm25 {
  private readonly db = new Database(":memory:");

  constructor(packs: readonly StoredNodeLike[]) {
    this.db.exec("CREATE VIRTUAL TABLE packs USING fts5(id, name, repo, classes, description, author)");
    this.db.exec("BEGIN");
    for (const p of packs) {
      if (p.status === "NodeStatusDeleted" || p.status === "NodeStatusBanned") continue;
      const repo = (p.repository ?? "").split("/").filter(Boolean).pop() ?? "";
      this.db.run("INSERT INTO packs VALUES (?, ?, ?, ?, ?, ?)", [
        p.id,
        p.name ?? "",
        repo,
        (p.app_node_names ?? []).join(" "),
        p.description ?? "",
        p.author ?? "",
      ]);
    }
    this.db.exec("COMMIT");
  }

  search(query: string, limit: number): string[] {
    const words = query
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
    if (words.length === 0) return [];
    const match = words.map((w) => `"${w}"`).join(" OR ");
    const rows = this.db.all("SELECT id FROM packs WHERE packs MATCH ? ORDER BY bm25(packs) LIMIT ?", [match, limit]) as { id: string }[];
    return rows.map((r) => r.id);
  }

  close(): void {
    this.db.close();
  }
}
