import { readFileSync } from "node:fs";
import { testCatalog } from "@app/testkit/catalog";

/** The one place the gateway benches find their catalog: the real one when present, else the repository's generated fixture. */
export function benchCatalogFile(): string {
  return testCatalog().path;
}

/** Which catalog the figures were measured on, for the bench's output. */
export function benchCatalogDescription(): string {
  return testCatalog().description;
}

/** The fields query generators draw their words from. */
export interface CatalogLine {
  id: string;
  name?: string;
  description?: string;
  app_node_names?: string[];
}

export function benchCatalogLines(file = benchCatalogFile()): CatalogLine[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as CatalogLine);
}
