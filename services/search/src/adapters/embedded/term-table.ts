import { hyphenatedWords, joinedRuns, nameParts, tokenise } from "../../domain/text.ts";
import { isAlnum, NamePartScanner } from "./name-part-bounds.ts";

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the tokens joined by one space, never 0 (0 marks an empty slot). */
export function identityHash(tokens: readonly string[]): number {
  let h = FNV_OFFSET;
  for (let t = 0; t < tokens.length; t++) {
    if (t > 0) h = Math.imul(h ^ 32, FNV_PRIME);
    const s = tokens[t]!;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  }
  return h === 0 ? 1 : h | 0;
}

// Two classes, not one over either array type, so that each push site sees one kind of typed array.
export class GrowInt32 {
  a = new Int32Array(1 << 16);
  len = 0;
  push(v: number): void {
    if (this.len === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.len++] = v;
  }
}

export class GrowUint8 {
  a = new Uint8Array(1 << 16);
  len = 0;
  push(v: number): void {
    if (this.len === this.a.length) {
      const b = new Uint8Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.len++] = v;
  }
}

const ASCII_TEXT = /^[\x00-\x7f]*$/;
/** joinedRuns()' longest run. */
const JOINED_RUN_MAX = 4;

/** An ASCII capital's lower case; any other code unit as it is. */
export const lowerCode = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

function foldLower(h: number, text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) h = Math.imul(h ^ lowerCode(text.charCodeAt(i)), FNV_PRIME);
  return h;
}

/** Whether text[s, e) is "comfy" or "comfyui" in any case: joinedRuns() starts no run there. */
function isComfy(text: string, s: number, e: number): boolean {
  if (e - s !== 5 && e - s !== 7) return false;
  for (let i = s; i < e; i++) if (lowerCode(text.charCodeAt(i)) !== "comfyui".charCodeAt(i - s)) return false;
  return true;
}

/**
 * The term dictionary under construction: an open-addressing hash table over term ids, so an
 * ASCII text can be tokenised in place (a token that is already known costs no allocation),
 * and per term: document frequency and the doc last seen.
 */
export class TermTable {
  readonly terms: string[] = [];
  /** [term id, its hash] per slot: a probe reads one cache line, not the slot and then the id's hash. */
  private slots = new Int32Array(2 << 17).fill(-1);
  private info = TermTable.newInfo(1 << 16);
  /**
   * Every term's UTF-16 code units, term after term: term id spans [charStart[id], charStart[id + 1]).
   * A probe verifies its candidate here rather than through the term's string: reading a short
   * string's characters cost some 70 ns a token, a quarter of tokenising a description.
   */
  private chars = new Uint16Array(1 << 20);
  private charStart = new Int32Array((1 << 16) + 1);
  private readonly scanner = new NamePartScanner();

  private static newInfo(terms: number): Int32Array {
    const info = new Int32Array(terms * 3);
    for (let i = 0; i < info.length; i += 3) info[i] = -1;
    return info;
  }

  get size(): number {
    return this.terms.length;
  }

  /** The id of a token given as a string (already normalised). */
  id(t: string): number {
    let h = FNV_OFFSET;
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), FNV_PRIME);
    const mask = (this.slots.length >> 1) - 1;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const id = this.slots[2 * at]!;
      if (id === -1) return this.insert(t, h, at);
      if (this.slots[2 * at + 1] === h && this.holds(id, t)) return id;
    }
  }

  /** Whether term `id` is `t`. */
  private holds(id: number, t: string): boolean {
    const s = this.charStart[id]!;
    if (this.charStart[id + 1]! - s !== t.length) return false;
    const chars = this.chars;
    for (let i = 0; i < t.length; i++) if (chars[s + i] !== t.charCodeAt(i)) return false;
    return true;
  }

  /** The id of the lower-cased ASCII token text[start, end), whose FNV hash (of lower-cased codes) is h. */
  idOfSlice(text: string, start: number, end: number, h: number): number {
    const mask = (this.slots.length >> 1) - 1;
    const len = end - start;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const id = this.slots[2 * at]!;
      if (id === -1) return this.insert(text.slice(start, end).toLowerCase(), h, at);
      if (this.slots[2 * at + 1] !== h) continue;
      const s = this.charStart[id]!;
      if (this.charStart[id + 1]! - s !== len) continue;
      const chars = this.chars;
      let i = 0;
      while (i < len && chars[s + i] === lowerCode(text.charCodeAt(start + i))) i++;
      if (i === len) return id;
    }
  }

  private insert(t: string, h: number, at: number): number {
    const id = this.terms.length;
    this.terms.push(t);
    if (id === this.charStart.length - 1) this.growTerms();
    let end = this.charStart[id]!;
    if (end + t.length > this.chars.length) {
      const chars = new Uint16Array(Math.max(this.chars.length * 2, end + t.length));
      chars.set(this.chars);
      this.chars = chars;
    }
    for (let i = 0; i < t.length; i++) this.chars[end++] = t.charCodeAt(i);
    this.charStart[id + 1] = end;
    this.slots[2 * at] = id;
    this.slots[2 * at + 1] = h;
    if (this.terms.length * 4 > this.slots.length) this.rehash();
    return id;
  }

  /** Record that doc `d` holds term `id` in `tier`, once per doc, keeping the best tier. */
  add(id: number, d: number, tier: number, pairTerm: GrowInt32, pairTier: GrowUint8): void {
    // Per term, [last doc, its pair's position, document frequency] side by side: one cache line.
    const info = this.info;
    const at3 = id * 3;
    if (info[at3] !== d) {
      info[at3] = d;
      info[at3 + 1] = pairTerm.len;
      info[at3 + 2]!++;
      pairTerm.push(id);
      pairTier.push(tier);
    } else {
      const at = info[at3 + 1]!;
      if (tier < pairTier.a[at]!) pairTier.a[at] = tier;
    }
  }

  df(id: number): number {
    return this.info[id * 3 + 2]!;
  }

  /**
   * Tokenise (as tokenise() does) and add every token of a text, allocating only for new terms;
   * with `joinHyphenated`, also hyphenatedWords()' terms. Returns identityHash() of the tokens,
   * computed on the way.
   */
  addText(text: string, d: number, tier: number, pairTerm: GrowInt32, pairTier: GrowUint8, joinHyphenated = false): number {
    if (!ASCII_TEXT.test(text)) {
      const tokens = tokenise(text);
      for (const t of tokens) this.add(this.id(t), d, tier, pairTerm, pairTier);
      if (joinHyphenated) for (const t of hyphenatedWords(text)) this.add(this.id(t), d, tier, pairTerm, pairTier);
      return identityHash(tokens);
    }
    let start = -1;
    let h = FNV_OFFSET;
    let whole = FNV_OFFSET;
    let first = true;
    // The run of tokens joined by single hyphens or underscores that the current token is in.
    let chainStart = 0;
    let chainLen = 0;
    let chainH = FNV_OFFSET;
    let lastEnd = -2;
    const n = text.length;
    for (let i = 0; i <= n; i++) {
      const c = lowerCode(i < n ? text.charCodeAt(i) : 32);
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) {
          start = i;
          h = FNV_OFFSET;
          if (!first) whole = Math.imul(whole ^ 32, FNV_PRIME);
          first = false;
          if (!(lastEnd === i - 1 && chainLen > 0 && (text.charCodeAt(lastEnd) === 45 || text.charCodeAt(lastEnd) === 95))) {
            if (joinHyphenated && chainLen > 1)
              this.add(
                this.idOfJoined(text, chainStart, lastEnd, lastEnd - chainStart - chainLen + 1, chainH),
                d,
                tier,
                pairTerm,
                pairTier,
              );
            chainStart = i;
            chainLen = 0;
            chainH = FNV_OFFSET;
          }
        }
        h = Math.imul(h ^ c, FNV_PRIME);
        whole = Math.imul(whole ^ c, FNV_PRIME);
        chainH = Math.imul(chainH ^ c, FNV_PRIME);
      } else if (start >= 0) {
        this.add(this.idOfSlice(text, start, i, h), d, tier, pairTerm, pairTier);
        start = -1;
        chainLen++;
        lastEnd = i;
      }
    }
    if (joinHyphenated && chainLen > 1)
      this.add(this.idOfJoined(text, chainStart, lastEnd, lastEnd - chainStart - chainLen + 1, chainH), d, tier, pairTerm, pairTier);
    return whole === 0 ? 1 : whole | 0;
  }

  /**
   * Add nameParts() of text[from, to) longer than one character and, with `joinRuns`, the
   * joinedRuns() of all its parts; in place for an ASCII name. With `tokensAdded` (the doc
   * already holds the range's tokens at this tier), a part that is a whole token is not looked
   * up again: most are (`Video Helper Suite`, every lower-case id).
   */
  addNameParts(
    text: string,
    from: number,
    to: number,
    joinRuns: boolean,
    tokensAdded: boolean,
    d: number,
    tier: number,
    pairTerm: GrowInt32,
    pairTier: GrowUint8,
  ): void {
    const scanner = this.scanner;
    if (!scanner.scan(text, from, to)) {
      const parts = nameParts(from === 0 && to === text.length ? text : text.slice(from, to));
      for (const p of parts) if (p.length > 1) this.add(this.id(p), d, tier, pairTerm, pairTier);
      if (joinRuns) for (const t of joinedRuns(parts)) this.add(this.id(t), d, tier, pairTerm, pairTier);
      return;
    }
    const { bounds, count } = scanner;
    for (let k = 0; k < count; k++) {
      const s = bounds[2 * k]!;
      const e = bounds[2 * k + 1]!;
      if (e - s < 2 || (tokensAdded && (s === from || !isAlnum(text.charCodeAt(s - 1))) && (e === to || !isAlnum(text.charCodeAt(e)))))
        continue;
      this.add(this.idOfSlice(text, s, e, foldLower(FNV_OFFSET, text, s, e)), d, tier, pairTerm, pairTier);
    }
    if (!joinRuns) return;
    for (let i = 0; i < count; i++) {
      const s = bounds[2 * i]!;
      const e = bounds[2 * i + 1]!;
      if (isComfy(text, s, e)) continue;
      let h = foldLower(FNV_OFFSET, text, s, e);
      let len = e - s;
      for (let k = i + 1; k < Math.min(count, i + JOINED_RUN_MAX); k++) {
        h = foldLower(h, text, bounds[2 * k]!, bounds[2 * k + 1]!);
        len += bounds[2 * k + 1]! - bounds[2 * k]!;
        this.add(this.idOfParts(text, bounds, i, k + 1, len, h), d, tier, pairTerm, pairTier);
      }
    }
  }

  /** The id of the lower-cased parts text[bounds[2i], bounds[2i+1]) for i in [first, last), joined; `len` long, hashed `h`. */
  private idOfParts(text: string, bounds: Int32Array, first: number, last: number, len: number, h: number): number {
    const mask = (this.slots.length >> 1) - 1;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const id = this.slots[2 * at]!;
      if (id === -1) {
        let t = "";
        for (let k = first; k < last; k++) t += text.slice(bounds[2 * k], bounds[2 * k + 1]);
        return this.insert(t.toLowerCase(), h, at);
      }
      if (this.slots[2 * at + 1] !== h) continue;
      let j = this.charStart[id]!;
      if (this.charStart[id + 1]! - j !== len) continue;
      const chars = this.chars;
      let same = true;
      for (let k = first; k < last && same; k++) {
        for (let i = bounds[2 * k]!, e = bounds[2 * k + 1]!; i < e; i++) {
          if (chars[j++] !== lowerCode(text.charCodeAt(i))) {
            same = false;
            break;
          }
        }
      }
      if (same) return id;
    }
  }

  /** The id of text[start, end) lower-cased without its hyphens and underscores; `len` long, hashed `h`. */
  private idOfJoined(text: string, start: number, end: number, len: number, h: number): number {
    const mask = (this.slots.length >> 1) - 1;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const id = this.slots[2 * at]!;
      if (id === -1) return this.insert(text.slice(start, end).replace(/[-_]/g, "").toLowerCase(), h, at);
      if (this.slots[2 * at + 1] !== h) continue;
      let j = this.charStart[id]!;
      if (this.charStart[id + 1]! - j !== len) continue;
      const chars = this.chars;
      let same = true;
      for (let i = start; i < end; i++) {
        const c = text.charCodeAt(i);
        if (c === 45 || c === 95) continue;
        if (chars[j++] !== lowerCode(c)) {
          same = false;
          break;
        }
      }
      if (same) return id;
    }
  }

  /** Twice the slots, each term moved with the hash its old slot kept beside it. */
  private rehash(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2).fill(-1);
    const mask = (slots.length >> 1) - 1;
    for (let i = 0; i < old.length; i += 2) {
      const id = old[i]!;
      if (id === -1) continue;
      const h = old[i + 1]!;
      let at = h & mask;
      while (slots[2 * at] !== -1) at = (at + 1) & mask;
      slots[2 * at] = id;
      slots[2 * at + 1] = h;
    }
    this.slots = slots;
  }

  private growTerms(): void {
    const size = (this.charStart.length - 1) * 2;
    const info = TermTable.newInfo(size);
    info.set(this.info);
    const charStart = new Int32Array(size + 1);
    charStart.set(this.charStart);
    this.info = info;
    this.charStart = charStart;
  }
}
