import { readFileSync } from "node:fs";

interface CatalogLine {
  id: string;
  name?: string;
  description?: string;
  app_node_names?: string[];
}

/** A deterministic pseudo-random sequence, so every run uses the same queries. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function typo(word: string, rand: () => number): string {
  const i = 1 + Math.floor(rand() * (word.length - 2));
  return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
}

/**
 * A few hundred realistic /nodes/search query strings drawn from the real catalog: single
 * words, two-word queries, typos, app node names, platform filters and later pages.
 */
export function realisticQueries(catalogFile: string, count = 400, seed = 42): string[] {
  const rows = readFileSync(catalogFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as CatalogLine);
  const rand = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const words = rows
    .flatMap((r) => `${r.name ?? ""} ${r.description ?? ""}`.toLowerCase().split(/[^a-z0-9]+/))
    .filter((w) => w.length >= 4 && w !== "comfyui");
  const appNodes = rows.flatMap((r) => r.app_node_names ?? []);
  const out: string[] = [];
  const enc = encodeURIComponent;
  for (let k = 0; out.length < count; k++) {
    switch (k % 8) {
      case 0:
        out.push(`search=${enc(pick(words))}`);
        break;
      case 1:
        out.push(`search=${enc(`${pick(words)} ${pick(words)}`)}`);
        break;
      case 2: {
        const w = pick(words.filter((x) => x.length >= 6));
        out.push(`search=${enc(typo(w, rand))}`);
        break;
      }
      case 3:
        out.push(`app_node_search=${enc(pick(appNodes))}`);
        break;
      case 4:
        out.push(`search=${enc(pick(rows).name ?? "")}`);
        break;
      case 5:
        out.push(`search=${enc(pick(words))}&supported_os=Windows&supported_accelerator=CUDA`);
        break;
      case 6:
        out.push(`search=${enc(pick(words).slice(0, 3))}&page=${2 + Math.floor(rand() * 4)}`);
        break;
      default:
        out.push(`page=${1 + Math.floor(rand() * 50)}&limit=10`);
    }
  }
  return out;
}
