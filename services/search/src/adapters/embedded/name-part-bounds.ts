/**
 * nameParts() (domain/text.ts) of an ASCII name, as [start, end) offsets into the name instead of
 * strings: the build looks each part up in its term table in place, so a 1M-pack build does not
 * run five regex replacements and a split per name (3M names, most of its garbage).
 * The offsets cover exactly the characters of each part; the part itself is their lower case.
 */

const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;
const isDigit = (c: number) => c >= 48 && c <= 57;
export const isAlnum = (c: number) => isLower(c) || isUpper(c) || isDigit(c);

/** Whether text[at, at + 7) is "comfyui" in any case. */
function comfyuiAt(text: string, at: number, end: number): boolean {
  if (at + 7 > end) return false;
  const word = "comfyui";
  for (let k = 0; k < 7; k++) if ((text.charCodeAt(at + k) | 32) !== word.charCodeAt(k)) return false;
  return true;
}

/**
 * The parts of text[from, to) as pairs in `bounds` (`count` of them), by the same boundaries as
 * nameParts' patterns: "comfyui" in any case stands alone; elsewhere a part ends before
 * lower→Upper, before the last capital of a run followed by a lower case letter (`VAEDecode` →
 * VAE, Decode), and between letters and digits. One scanner serves a whole build, so a name
 * costs no allocation.
 */
export class NamePartScanner {
  bounds = new Int32Array(64);
  count = 0;

  /** False (and no parts) when the range is not all ASCII: the Unicode patterns then decide. */
  scan(text: string, from: number, to: number): boolean {
    this.count = 0;
    for (let i = from; i < to; i++) if (text.charCodeAt(i) > 127) return false;
    let i = from;
    while (i < to) {
      if (!isAlnum(text.charCodeAt(i))) {
        i++;
        continue;
      }
      let end = i + 1;
      while (end < to && isAlnum(text.charCodeAt(end))) end++;
      // Within one run of letters and digits: "comfyui" first, then the rest between them.
      let segStart = i;
      for (let at = i; at < end;) {
        if (comfyuiAt(text, at, end)) {
          this.segment(text, segStart, at);
          this.push(at, at + 7);
          at += 7;
          segStart = at;
        } else at++;
      }
      this.segment(text, segStart, end);
      i = end;
    }
    return true;
  }

  /** A segment holds no "comfyui": split it at case and digit changes. */
  private segment(text: string, s: number, e: number): void {
    let start = s;
    for (let i = s + 1; i < e; i++) {
      const p = text.charCodeAt(i - 1);
      const c = text.charCodeAt(i);
      if (
        (isLower(p) && isUpper(c)) ||
        (isUpper(p) && isUpper(c) && i + 1 < e && isLower(text.charCodeAt(i + 1))) ||
        (isDigit(p) ? !isDigit(c) : isDigit(c))
      ) {
        this.push(start, i);
        start = i;
      }
    }
    if (start < e) this.push(start, e);
  }

  private push(s: number, e: number): void {
    if (this.count * 2 + 2 > this.bounds.length) {
      const b = new Int32Array(this.bounds.length * 2);
      b.set(this.bounds);
      this.bounds = b;
    }
    this.bounds[this.count * 2] = s;
    this.bounds[this.count * 2 + 1] = e;
    this.count++;
  }
}
