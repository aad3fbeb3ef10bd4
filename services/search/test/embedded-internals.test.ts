import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildIndex, identityHash } from "../src/adapters/embedded/build-index.ts";
import { TermTrie } from "../src/adapters/embedded/term-trie.ts";
import { TrigramIndex } from "../src/adapters/embedded/trigram-index.ts";
import { IndexSearcher } from "../src/adapters/embedded/search-index.ts";
import { selectTop } from "../src/adapters/embedded/top-keys.ts";
import { SortedTerms } from "../src/adapters/embedded/sorted-terms.ts";
import { loadCatalog } from "../src/adapters/catalog-source.ts";
import { seeded, testCatalog } from "@app/testkit/catalog";
import { hyphenatedWords, joinedRuns, nameParts, namePartsIndexed, normaliseRepositoryUrl, tokenise } from "../src/domain/text.ts";
import { NamePartScanner } from "../src/adapters/embedded/name-part-bounds.ts";

/** Damerau's optimal string alignment distance, the slow obvious way. */
function osa(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The typo rule stated plainly: a first-character typo costs two. */
function expected(q: string, t: string, maxD: number): number | undefined {
  let best: number | undefined;
  if (q[0] === t[0]) {
    const dd = osa(q.slice(1), t.slice(1));
    if (dd <= maxD) best = dd;
  }
  if (maxD >= 2 && osa(q, t) <= 1) best = Math.min(best ?? 2, osa(q, t) === 0 ? 0 : 2);
  return best;
}

const word = fc.string({ unit: fc.constantFrom(..."abcde"), minLength: 1, maxLength: 9 });

describe("embedded index internals", () => {
  it("the trigram index's candidates for a needle hold every string containing it, ascending", () => {
    const text = fc.string({ unit: fc.constantFrom(..."abcé\u4e2d"), minLength: 0, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 40 }), text, (strings, needle) => {
        const index = new TrigramIndex(strings);
        const candidates = index.candidates(needle);
        if (needle.length < 3) {
          expect(candidates).toBeUndefined();
          return;
        }
        const got = [...candidates!];
        expect(got).toEqual([...got].sort((a, b) => a - b));
        const containing = strings.flatMap((s, id) => (s.includes(needle) ? [id] : []));
        for (const id of containing) expect(got).toContain(id);
      }),
    );
  });

  /** The trie's typo matches of `q` against `dict`, and what the rule says they should be. */
  function typoMatches(dict: string[], q: string, maxD: number) {
    const terms = [...dict].sort();
    const trie = new TermTrie(terms);
    const got = new Map<string, number>();
    trie.fuzzy(q, maxD, (i, dist) => {
      const t = terms[i]!;
      got.set(t, Math.min(got.get(t) ?? 99, dist));
    });
    const want = new Map<string, number>();
    for (const t of terms) {
      const e = expected(q, t, maxD);
      if (e !== undefined) want.set(t, e);
    }
    return { got: Object.fromEntries(got), want: Object.fromEntries(want) };
  }

  /** `w` after up to three random edits (substitute, insert, delete, swap two neighbours) over `alphabet`: terms near a query. */
  const edited = (w: string, alphabet: string) =>
    fc
      .array(fc.tuple(fc.constantFrom("sub", "ins", "del", "swap"), fc.nat(w.length), fc.constantFrom(...alphabet)), { maxLength: 3 })
      .map((edits) => {
        let s = w;
        for (const [op, at, c] of edits) {
          const i = Math.min(at, s.length);
          if (op === "sub") s = s.slice(0, i) + c + s.slice(i + 1);
          else if (op === "ins") s = s.slice(0, i) + c + s.slice(i);
          else if (op === "del") s = s.slice(0, i) + s.slice(i + 1);
          else if (i + 1 < s.length) s = s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2);
        }
        return s || alphabet[0]!;
      });

  it("the typo trie finds exactly the terms the rule allows, with their distances", () => {
    const cases = word.chain((q) =>
      fc.tuple(fc.constant(q), fc.uniqueArray(fc.oneof(word, edited(q, "abcde")), { minLength: 1, maxLength: 60 }), fc.constantFrom(1, 2)),
    );
    fc.assert(
      fc.property(cases, ([q, dict, maxD]) => {
        const { got, want } = typoMatches(dict, q, maxD);
        expect(got).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });

  /** The trie's prefix matches of `q` (per term, the fewest edits of any prefix reported) and the rule's: its best prefix, first character q's own, q itself aside. */
  function typoPrefixMatches(dict: string[], q: string, maxD: number) {
    const terms = [...dict].sort();
    const trie = new TermTrie(terms);
    const whole = new Map<string, number>();
    const got = new Map<string, number>();
    trie.fuzzy(
      q,
      maxD,
      (i, dist) => whole.set(terms[i]!, Math.min(whole.get(terms[i]!) ?? 99, dist)),
      (prefix, dist) => {
        for (const t of terms) if (t.startsWith(prefix)) got.set(t, Math.min(got.get(t) ?? 99, dist));
      },
    );
    const want = new Map<string, number>();
    for (const t of terms) {
      if (t[0] !== q[0]) continue;
      let best = 99;
      for (let j = 1; j <= t.length; j++) best = Math.min(best, osa(q.slice(1), t.slice(1, j)));
      if (best <= maxD) want.set(t, best);
    }
    // The terms q itself begins are the caller's plain prefix range; a shorter prefix may reach them too.
    for (const t of terms) {
      if (!t.startsWith(q)) continue;
      want.delete(t);
      got.delete(t);
    }
    return {
      got: Object.fromEntries(got),
      want: Object.fromEntries(want),
      whole: Object.fromEntries(whole),
      wholeWant: typoMatches(dict, q, maxD).want,
    };
  }

  it("the typo trie finds every term a word still being typed begins within the allowed edits, and the same whole terms", () => {
    const cases = word.chain((q) =>
      fc.tuple(
        fc.constant(q),
        fc.uniqueArray(fc.oneof(word, edited(q, "abcde"), edited(q + "abc", "abcde")), { minLength: 1, maxLength: 60 }),
        fc.constantFrom(1, 2),
      ),
    );
    fc.assert(
      fc.property(cases, ([q, dict, maxD]) => {
        const { got, want, whole, wholeWant } = typoPrefixMatches(dict, q, maxD);
        expect(got).toEqual(want);
        expect(whole).toEqual(wholeWant);
      }),
      { numRuns: 500 },
    );
    const long = fc.string({ unit: fc.constantFrom(..."ab"), minLength: 29, maxLength: 36 });
    const longCases = long.chain((q) =>
      fc.tuple(
        fc.constant(q),
        fc.uniqueArray(fc.oneof(edited(q, "ab"), edited(q + "ab", "ab")), { minLength: 1, maxLength: 30 }),
        fc.constantFrom(1, 2),
      ),
    );
    fc.assert(
      fc.property(longCases, ([q, dict, maxD]) => {
        const { got, want } = typoPrefixMatches(dict, q, maxD);
        expect(got).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  it("the typo trie is exact for long tokens too (bit rows up to 32 characters, table rows past them)", () => {
    const long = fc.string({ unit: fc.constantFrom(..."ab"), minLength: 29, maxLength: 36 });
    const cases = long.chain((q) =>
      fc.tuple(fc.constant(q), fc.uniqueArray(edited(q, "ab"), { minLength: 1, maxLength: 30 }), fc.constantFrom(1, 2)),
    );
    fc.assert(
      fc.property(cases, ([q, dict, maxD]) => {
        const { got, want } = typoMatches(dict, q, maxD);
        expect(got).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  it("the typo trie finds first-character edits past the 64 first characters its front filter tells apart", () => {
    // 150 first characters (Latin, CJK): their filter bits wrap around; every spelling with another first character must still be found.
    const firsts = [
      ..."abcdefghijklmnopqrstuvwxyz0123456789",
      ...Array.from({ length: 114 }, (_, i) => String.fromCharCode(0x4e00 + i * 7)),
    ];
    const q = "xpandrender";
    const dict = [...firsts.map((c) => c + q.slice(1)), ...firsts.map((c) => c + q), ...firsts.map((c) => c + "qqqqqqqqqq")];
    const { got, want } = typoMatches(dict, q, 2);
    expect(Object.keys(want).length).toBeGreaterThan(290);
    expect(got).toEqual(want);
  });

  it("the build's in-place tokeniser gives tokenise()'s terms and identity hash", async () => {
    const fragments = fc
      .array(
        fc.constantFrom(
          "comfyui",
          "ComfyUI",
          "cOmFyUi",
          "comfy",
          "UI",
          "Comfy",
          "X",
          "Vae",
          "VAE",
          "Decode",
          "v2",
          "3D",
          "-",
          "_",
          " ",
          "--",
          ".git",
          "/",
          "a",
          "B",
          "9",
        ),
        { maxLength: 10 },
      )
      .map((p) => p.join(""));
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: "grapheme", maxLength: 20 }),
      fragments,
      fc.constantFrom("ComfyUI-KJNodes", "Überwald_Café", "a.b/c--D"),
    );
    await fc.assert(
      fc.asyncProperty(text, text, text, async (name, description, repo) => {
        const repository = `https://github.com/o/${repo}`;
        // Twice, so the second pack finds every term already there (the in-place comparisons).
        const data = await buildIndex([
          { id: "fixed-id", name, description, repository },
          { id: "other-id", name, description, repository },
        ]);
        const url = normaliseRepositoryUrl(repository);
        const alias = url.slice(url.lastIndexOf("/") + 1);
        const written = repository.replace(/(\.git)?\/*$/, "");
        const repoTerms = alias ? [...tokenise(alias), ...namePartsIndexed(written.slice(written.lastIndexOf("/") + 1))] : [];
        const want = [
          ...new Set([
            "other",
            ...tokenise("fixed-id"),
            ...namePartsIndexed("fixed-id"),
            ...tokenise(name),
            ...namePartsIndexed(name),
            ...joinedRuns(nameParts(name)),
            ...tokenise(description),
            ...hyphenatedWords(description),
            ...repoTerms,
          ]),
        ].sort();
        expect(data.terms).toEqual(want);
        expect(data.identityHashes[1]).toBe(name ? identityHash(tokenise(name)) : 0);
      }),
      { numRuns: 1000 },
    );
  });

  it("the build's name scanner splits an ASCII name as nameParts() does", () => {
    const fragments = fc.array(
      fc.constantFrom(
        "comfyui",
        "ComfyUI",
        "COMFYUI",
        "cOmFyUi",
        "comfy",
        "UI",
        "Comfy",
        "yui",
        "fyUI",
        "X",
        "Vae",
        "VAE",
        "Decode",
        "v2",
        "3D",
        "-",
        "_",
        " ",
        "a",
        "B",
        "9",
      ),
      { maxLength: 12 },
    );
    const scanner = new NamePartScanner();
    fc.assert(
      fc.property(
        fc.oneof(
          fragments.map((p) => p.join("")),
          fc.string({ unit: fc.constantFrom(..."aZb9Y0-_ .CcUuIiOoMmFfYy"), maxLength: 30 }),
        ),
        (s) => {
          expect(scanner.scan(`.${s}.`, 1, s.length + 1)).toBe(true);
          const got = Array.from({ length: scanner.count }, (_, k) =>
            s.slice(scanner.bounds[2 * k]! - 1, scanner.bounds[2 * k + 1]! - 1).toLowerCase(),
          );
          expect(got).toEqual(nameParts(s));
        },
      ),
      { numRuns: 5000 },
    );
    expect(scanner.scan("Café", 0, 4)).toBe(false);
  });

  it("names and descriptions split the same by their ASCII patterns as by the Unicode ones", () => {
    // A no-break space at the end is a separator that sends the text down the Unicode path.
    const ascii = fc.string({ unit: fc.constantFrom(..."aZb9Y0-_ .Cc"), minLength: 0, maxLength: 24 });
    fc.assert(
      fc.property(ascii, (s) => {
        expect(nameParts(s)).toEqual(nameParts(`${s}\u00a0`));
        expect(hyphenatedWords(s)).toEqual(hyphenatedWords(`${s} \u00a0`));
      }),
    );
    const fragments = fc.array(
      fc.constantFrom(
        "comfyui",
        "ComfyUI",
        "COMFYUI",
        "comfy",
        "UI",
        "Comfy",
        "ui",
        "X",
        "Vae",
        "VAE",
        "Decode",
        "v2",
        "3D",
        "-",
        "_",
        " ",
        "a",
        "B",
        "9",
      ),
      { maxLength: 10 },
    );
    fc.assert(
      fc.property(fragments, (parts) => {
        expect(nameParts(parts.join(""))).toEqual(nameParts(`${parts.join("")}\u00a0`));
      }),
      { numRuns: 3000 },
    );
    expect(nameParts("VAEcomfyui")).toEqual(["vae", "comfyui"]);
    expect(nameParts("SeedVR2_VideoUpscaler")).toEqual(["seed", "vr", "2", "video", "upscaler"]);
    expect(nameParts("ComfyUI-WanVideoWrapper")).toEqual(["comfyui", "wan", "video", "wrapper"]);
    expect(hyphenatedWords("lip-sync and image_to-3D")).toEqual(["lipsync", "imageto3d"]);
  });

  it("the index does not depend on the order the records come in (the build visits them in that order)", async () => {
    const records = (await loadCatalog(testCatalog().path)).records;
    const shuffled = [...records];
    const rand = seeded(3);
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    // Two packs of one id: the later doc answers, whichever record came first.
    const twin = { ...records[0]!, downloads: -1 };
    expect(await buildIndex([twin, ...shuffled])).toEqual(await buildIndex([...records, twin]));
  });

  it("a search string's remembered matches answer its other filters and pages as a fresh search does", async () => {
    const data = await buildIndex((await loadCatalog(testCatalog().path)).records);
    const warm = new IndexSearcher(data);
    const variants = [{}, { os: "Windows" }, { offset: 10 }, { accelerator: "CUDA", limit: 20 }, { includeBanned: true }, {}];
    for (const search of ["c", "co", "image", "ComfyUI-Impact", "controlnet upscale", "imgae"]) {
      for (const v of variants) {
        const q = { search, includeBanned: false, offset: 0, limit: 10, ...v };
        const fresh = new IndexSearcher(data).search(q);
        const answer = warm.search(q);
        expect(answer.total).toBe(fresh.total);
        expect(answer.nodes.map((n) => n.id)).toEqual(fresh.nodes.map((n) => n.id));
      }
    }
  });

  it("a word being typed reaches past a mistyped prefix, but not into a common word's thousands of packs", async () => {
    const packs = (n: number) => [
      ...Array.from({ length: n }, (_, i) => ({
        id: `p${i}`,
        name: `Pack ${i}`,
        description: "commonplace",
        status: "NodeStatusActive" as const,
      })),
      { id: "cw", name: "Commonwealth Tools", status: "NodeStatusActive" as const },
    ];
    const total = async (n: number, search: string) =>
      new IndexSearcher(await buildIndex(packs(n))).search({ search, includeBanned: false, offset: 0, limit: 10 }).total;
    // `commonx`: `common`, one edit away, begins `commonplace` and `commonwealth`.
    expect(await total(20, "commonx")).toBe(21);
    expect(await total(4000, "commonx")).toBe(0);
    expect(await total(4000, "commonwealtx")).toBe(1); // `commonwealt` begins one term, in one pack
  });

  it("the dictionary's prefix ranges and exact lookups are those of a plain scan, whatever the characters", () => {
    const chars = fc.constantFrom("a", "b", "z", "\u0000", "\u007f", "\u0080", "é", "\uffff", "0");
    const term = fc.string({ unit: chars, minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(fc.uniqueArray(term, { maxLength: 40 }), term, (dict, key) => {
        const terms = [...dict].sort();
        const sorted = new SortedTerms(terms);
        const starting = terms.flatMap((t, i) => (t.startsWith(key) ? [i] : []));
        const [s, e] = sorted.prefixRange(key);
        expect(Array.from({ length: e - s }, (_, i) => s + i)).toEqual(starting);
        expect(sorted.exactIndex(key)).toBe(terms.indexOf(key));
      }),
      { numRuns: 500 },
    );
  });

  it("selectTop returns the k smallest keys in order", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1e6 }), { maxLength: 300 }), fc.integer({ min: 0, max: 320 }), (xs, k) => {
        const keys = Float64Array.from(xs);
        expect([...selectTop(keys, xs.length, k)]).toEqual([...xs].sort((a, b) => a - b).slice(0, k));
      }),
      { numRuns: 300 },
    );
  });
});
