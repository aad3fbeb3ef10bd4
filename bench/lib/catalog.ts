import { readFileSync } from "node:fs";
import { catalogPath } from "@app/testkit/processes";

/**
 * The one place the gateway benches find their catalog (the real one beside the repository
 * for now; `@app/testkit/catalog` will add the generated fixture for a fresh clone).
 */
export function benchCatalogFile(): string {
  return catalogPath();
}

/** The fields query generators draw their words from. */
export interface CatalogLine {
  id: string;
  name?: string;
  description?: string;
  app_node_names?: string[];
}

export function benchCatalogLines(file = benchCatalogFile()): CatalogLine[] {
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as CatalogLine);
}
