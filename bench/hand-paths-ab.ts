import { SearchQueryParams } from "@app/contracts";
import { EmbeddedSearchEngine, loadCatalog, parseSearchQuery, resultPage, toEngineQuery, toPage, type EngineResult } from "@app/search/internal";
import { benchCatalogDescription, benchCatalogFile, benchCatalogLines } from "./lib/catalog.ts";
import { firstSightQueries } from "./lib/first-sight-queries.ts";
import { figure, runWhenMain, type BenchOutput } from "./lib/results.ts";

/**
 * Same-run A/B of the search's two hand-written paths against the library path they stand in for,
 * in one process, over first-sight query strings (every one new, so no memo answers):
 * - the query: `parseSearchQuery` (its fast parser, zod for anything unusual) against zod's
 *   `SearchQueryParams.parse` alone;
 * - the page: `resultPage` (node texts serialised once per record, the page concatenated) against
 *   `JSON.stringify(toPage(...))`, over the engine's own answers to those queries.
 * Rounds alternate A and B; the medians are kept. A path stays while it is clearly cheaper per
 * request than the library's (docs/decisions/0018).
 */
const QUERIES = 20_000;
const ROUNDS = 7;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timePerCall(n: number, fn: (i: number) => unknown): number {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) if (fn(i)) sink++;
  const ns = Number(process.hrtime.bigint() - t0);
  if (sink < 0) console.log(sink);
  return ns / n / 1000;
}

/** Alternating rounds of two arms, each over the same inputs; returns the medians in µs per call. */
function alternate(n: number, a: (i: number) => unknown, b: (i: number) => unknown): { a: number; b: number } {
  const as: number[] = [];
  const bs: number[] = [];
  timePerCall(n, a); // warm both arms before measuring
  timePerCall(n, b);
  for (let r = 0; r < ROUNDS; r++) {
    as.push(timePerCall(n, a));
    bs.push(timePerCall(n, b));
  }
  return { a: median(as), b: median(bs) };
}

export async function run(): Promise<BenchOutput & Record<string, unknown>> {
  const file = benchCatalogFile();
  const stream = firstSightQueries(benchCatalogLines(file));
  const raws = Array.from({ length: QUERIES }, () => Object.fromEntries(new URLSearchParams(stream.next().value)));

  const parse = alternate(
    QUERIES,
    (i) => parseSearchQuery(raws[i]!).ok,
    (i) => SearchQueryParams.safeParse(raws[i]).success,
  );

  const engine = new EmbeddedSearchEngine();
  await engine.replaceAll((await loadCatalog(file)).records);
  const answers: { result: EngineResult; page: number; limit: number }[] = [];
  for (const raw of raws) {
    const parsed = parseSearchQuery(raw);
    if (!parsed.ok) continue;
    const q = parsed.query;
    answers.push({ result: await engine.search(toEngineQuery(q)), page: q.page, limit: q.limit });
  }
  // The hand-written arm's page is built anew each call (its kept text dropped), as for a result never seen.
  const handInputs = answers.map((x) => ({ ...x, result: { nodes: x.result.nodes, total: x.result.total, texts: x.result.texts } as EngineResult }));
  const page = alternate(
    answers.length,
    (i) => {
      const x = handInputs[i]!;
      x.result.pageText = undefined;
      return resultPage(x.result, x.page, x.limit).bytes;
    },
    (i) => {
      const x = answers[i]!;
      return Buffer.byteLength(JSON.stringify(toPage(x.result.nodes, x.result.total, x.page, x.limit)));
    },
  );

  const figures = [
    figure("query parse, hand-written (µs a first-sight query)", round(parse.a), "µs", { baseline: ["zod SearchQueryParams", round(parse.b)], goal: "< 0.5× the library's" }),
    figure("page JSON, hand-written (µs a first-sight page)", round(page.a), "µs", { baseline: ["JSON.stringify(toPage())", round(page.b)], goal: "< 0.5× the library's" }),
  ];
  const summary = [
    `hand paths on ${benchCatalogDescription()}: query parse ${round(parse.a)} µs vs zod ${round(parse.b)} µs; page JSON ${round(page.a)} µs vs JSON.stringify ${round(page.b)} µs`,
  ];
  return { figures, summary, queries: QUERIES, pages: answers.length, rounds: ROUNDS };
}

const round = (x: number) => Math.round(x * 100) / 100;

await runWhenMain(import.meta.url, run);
