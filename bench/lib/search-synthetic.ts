import { readFileSync } from "node:fs";
import type { CatalogRecord } from "@app/contracts";
import { seeded } from "@app/testkit/catalog";

const OS = [["Microsoft :: Windows"], ["POSIX :: Linux"], ["OS Independent"], ["MacOS", "POSIX :: Linux"], ["Microsoft :: Windows :: 11"]];
const ACC = [["GPU :: NVIDIA CUDA"], ["CPU"], ["GPU :: AMD ROCm", "GPU :: NVIDIA CUDA"], ["GPU :: Apple Metal"], ["DirectML"]];

/**
 * `count` synthetic node packs drawn from the real catalog's distributions: name words,
 * description words (sampled by occurrence, so by frequency), app node names, authors,
 * star counts; a few percent carry platform lists, banned or deleted status.
 */
export function syntheticCatalog(catalogFile: string, count: number, seed = 7): CatalogRecord[] {
  const rows = readFileSync(catalogFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as CatalogRecord);
  const nameWords = rows.flatMap((r) => (r.name ?? "").split(/[\s_\-.]+/).filter(Boolean));
  const descWords = rows.flatMap((r) => (r.description ?? "").split(/\s+/).filter(Boolean));
  const appNodes = rows.flatMap((r) => r.app_node_names ?? []);
  const authors = rows.map((r) => r.author ?? r.publisher?.name ?? "someone");
  const stars = rows.map((r) => r.repo_stars ?? 0);
  const tags = rows.flatMap((r) => r.tags ?? []);
  const rand = seeded(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const out: CatalogRecord[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const nWords = 1 + Math.floor(rand() * 3);
    const words: string[] = [];
    for (let w = 0; w < nWords; w++) words.push(pick(nameWords));
    const name = words.join(rand() < 0.5 ? "-" : " ");
    const descLen = 6 + Math.floor(rand() * 24);
    const desc: string[] = [];
    for (let w = 0; w < descLen; w++) desc.push(pick(descWords));
    const nApp = Math.floor(rand() * rand() * 16);
    const app: string[] = [];
    for (let a = 0; a < nApp; a++) app.push(pick(appNodes));
    const author = pick(authors);
    const owner = author.toLowerCase().replace(/[^a-z0-9-]+/g, "-");
    const r = rand();
    const rec: CatalogRecord = {
      id: `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${i.toString(36)}`,
      name,
      description: desc.join(" "),
      author,
      repository: `https://github.com/${owner}/${words.join("-")}-${i.toString(36)}`,
      repo_stars: pick(stars),
      downloads: Math.floor(rand() * 10_000),
      status: r < 0.005 ? "NodeStatusBanned" : r < 0.01 ? "NodeStatusDeleted" : "NodeStatusActive",
      publisher: { id: owner, name: author },
      app_node_names: app,
      created_at: "2025-01-01T00:00:00Z",
    };
    if (tags.length && rand() < 0.02) rec.tags = [pick(tags)];
    if (rand() < 0.1) rec.supported_os = pick(OS);
    if (rand() < 0.1) rec.supported_accelerators = pick(ACC);
    out[i] = rec;
  }
  return out;
}
