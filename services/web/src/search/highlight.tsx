import type { ComponentChildren } from "preact";
import { fold } from "./box-query.ts";

/**
 * Marks the words of `text` that the query matched: a query term is a prefix of the word
 * (the engine matches the last term as a prefix), or within the engine's typo allowance
 * (one edit from 5 characters, two from 9), so "contrlnet" lights up "ControlNet".
 */
export function Highlight({ text, terms }: { text: string; terms: string[] }): ComponentChildren {
  if (terms.length === 0 || !text) return text;
  const parts = text.split(/([\p{L}\p{N}]+)/u);
  return parts.map((part, i) => (i % 2 === 1 && matches(fold(part), terms) ? <mark key={i}>{part}</mark> : part));
}

function matches(word: string, terms: string[]): boolean {
  return terms.some(
    (t) => word.startsWith(t) || camelPieceMatch(word, t) || (t.length >= 5 && withinEdits(word, t, t.length >= 9 ? 2 : 1)),
  );
}

/** "facedetailer" contains the term "detailer" at a camelCase boundary we can no longer see; accept infixes of 4+ chars. */
const camelPieceMatch = (word: string, t: string): boolean => t.length >= 4 && word.includes(t);

function withinEdits(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > max) return false;
    prev = cur;
  }
  return prev[b.length]! <= max;
}
