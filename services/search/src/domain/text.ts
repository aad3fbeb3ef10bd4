/**
 * Text normalisation shared by every engine and by the query layer, so that "what matches"
 * means the same thing everywhere: NFKD, diacritics stripped, lower case, split on anything
 * that is not a letter or a digit.
 */

const ASCII = /^[\x00-\x7f]*$/;
const MARKS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const SEPARATORS_G = /[^\p{L}\p{N}]+/gu;

export function normalise(s: string): string {
  // NFKD is by far the slowest step; most catalog text is ASCII and needs none of it.
  if (ASCII.test(s)) return s.toLowerCase();
  return s.normalize("NFKD").replace(MARKS, "").toLowerCase();
}

const ASCII_SEPARATORS = /[^a-z0-9]+/;

export function tokenise(s: string): string[] {
  // The ASCII path gives the same tokens as the Unicode one, several times faster.
  const parts = ASCII.test(s) ? s.toLowerCase().split(ASCII_SEPARATORS) : normalise(s).split(SEPARATORS);
  const out: string[] = [];
  for (const p of parts) if (p) out.push(p);
  return out;
}

/** `FaceDetailer` → face, detailer; `KSamplerAdvanced` → k, sampler, advanced; `VAEDecode` → vae, decode. */
export function camelParts(name: string): string[] {
  const spaced = name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2");
  return tokenise(spaced);
}

/** Tokens of an app node name: the whole name as one token plus its separator and camelCase parts. */
export function appNodeNameTokens(name: string): string[] {
  const whole = normalise(name).replace(SEPARATORS_G, "");
  const set = new Set<string>();
  if (whole) set.add(whole);
  for (const t of tokenise(name)) set.add(t);
  for (const t of camelParts(name)) set.add(t);
  return [...set];
}

/** The form in which ids and names compare for the "exact match" rule: separators collapse to one space. */
export function identityKey(s: string): string {
  return tokenise(s).join(" ");
}

/** The repository name in a URL (`https://github.com/kijai/ComfyUI-KJNodes` → `ComfyUI-KJNodes`), an alias of the id. */
export function repositoryName(url: string): string | undefined {
  const path = normaliseRepositoryUrl(url);
  const last = path.split("/").filter(Boolean).pop();
  return last && path.includes("/") ? last : undefined;
}

/** Scheme, `www.`, case, trailing `/` and `.git` do not matter when matching repository URLs. */
export function normaliseRepositoryUrl(s: string): string {
  let u = s.trim().toLowerCase();
  // Most URLs are plain https://github.com/...: slice instead of running the general patterns.
  if (u.startsWith("https://")) u = u.slice(8);
  else if (u.startsWith("http://")) u = u.slice(7);
  else u = u.replace(/^[a-z][a-z0-9+.-]*:\/\//, "").replace(/^git@([^:/]+):/, "$1/");
  if (u.startsWith("www.")) u = u.slice(4);
  for (;;) {
    if (u.endsWith("/")) u = u.slice(0, -1);
    else if (u.endsWith(".git")) u = u.slice(0, -4);
    else return u;
  }
}

/** Where a name is written in parts: case changes, letters against digits (`ComfyUI` stays whole). */
const COMFYUI = /comfyui/gi;
/**
 * The words of a name as it is written: separators, CamelCase and letter/digit boundaries
 * (`ComfyUI-WanVideoWrapper` → comfyui, wan, video, wrapper; `SeedVR2_VideoUpscaler` → seed,
 * vr, 2, video, upscaler). Only the parts: the joined forms come from tokenise().
 */
export function nameParts(name: string): string[] {
  // The ASCII patterns split an ASCII name exactly as the Unicode ones do, several times faster (a 1M-pack build runs this 3M times).
  const spaced = ASCII.test(name)
    ? name
        .replace(COMFYUI, " comfyui ")
        .replace(/([a-z])([A-Z])/g, "$1 $2")
        .replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
        .replace(/([A-Za-z])([0-9])/g, "$1 $2")
        .replace(/([0-9])([A-Za-z])/g, "$1 $2")
    : name
        .replace(COMFYUI, " comfyui ")
        .replace(/([\p{Ll}])(\p{Lu})/gu, "$1 $2")
        .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
        .replace(/(\p{L})(\p{N})/gu, "$1 $2")
        .replace(/(\p{N})(\p{L})/gu, "$1 $2");
  return tokenise(spaced);
}

/** 0: separator, 1: a-z, 2: A-Z, 3: 0-9. */
function asciiKind(c: number): number {
  return c >= 97 && c <= 122 ? 1 : c >= 65 && c <= 90 ? 2 : c >= 48 && c <= 57 ? 3 : 0;
}

/**
 * nameParts() of an ASCII name, as [start, end) ranges of the name itself (to be lower-cased by
 * the caller): the same parts in the same order, with no string made per part, so the build can
 * look each up in its term table in place (a 1M-pack build splits 2M ids and repository names).
 * The five patterns of nameParts(), as boundaries between neighbouring characters: "comfyui" (any
 * case) stands alone, lower→upper, an upper before upper+lower, letter↔digit.
 */
export function forEachNamePartAscii(name: string, visit: (start: number, end: number) => void): void {
  const lower = name.toLowerCase();
  const n = name.length;
  let span = lower.indexOf("comfyui");
  let start = -1;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    if (i === span) {
      if (start >= 0) visit(start, i);
      visit(i, i + 7);
      start = -1;
      i += 6;
      span = lower.indexOf("comfyui", i + 1);
      continue;
    }
    const kind = asciiKind(name.charCodeAt(i));
    if (kind === 0) {
      if (start >= 0) visit(start, i);
      start = -1;
    } else if (start < 0) {
      start = i;
    } else if (
      (prev === 1 && kind === 2) ||
      (prev === 2 && kind === 2 && i + 1 < n && i + 1 !== span && asciiKind(name.charCodeAt(i + 1)) === 1) ||
      (prev === 3) !== (kind === 3)
    ) {
      visit(start, i);
      start = i;
    }
    prev = kind;
  }
  if (start >= 0) visit(start, n);
}

/**
 * Every run of 2 to 4 neighbouring words of a name joined into one (`Video Helper Suite` →
 * videohelper, helpersuite, videohelpersuite), so a name typed as one word finds a name
 * written as several. Runs starting with the application's name (`comfyuivideo…`) are left
 * out: nobody types them, and nearly every pack would add its own.
 */
export function joinedRuns(parts: readonly string[], maxRun = 4): string[] {
  const out = new Set<string>();
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === "comfyui" || parts[i] === "comfy") continue;
    let joined = parts[i]!;
    for (let k = i + 1; k < Math.min(parts.length, i + maxRun); k++) {
      joined += parts[k]!;
      out.add(joined);
    }
  }
  return [...out];
}

/**
 * The parts of a name worth indexing on their own (nameParts without single characters, which
 * only ever served as a one-letter prefix that the whole words already answer).
 */
export function namePartsIndexed(name: string): string[] {
  return nameParts(name).filter((p) => p.length > 1);
}

/**
 * The ecosystem's filler words: nearly every pack is a "ComfyUI custom nodes pack". They stay
 * searchable but weigh little in a match.
 */
export const NOISE_WORDS: ReadonlySet<string> = new Set([
  "comfyui", "comfy", "ui", "nodes", "node", "pack", "custom", "for", "the", "a", "an", "and", "of", "to", "in", "with", "on", "by",
]);

/** Words joined by hyphens or underscores in running text (`lip-sync`, `image-to-3D`), as one word. */
const JOINED_IN_TEXT = /[\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)+/gu;
const JOINED_IN_ASCII = /[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+/g;
export function hyphenatedWords(text: string): string[] {
  const out: string[] = [];
  // Most descriptions join no words, and most are ASCII, where the Unicode classes cost far more than they decide (a tenth of a 1M-pack build).
  if (!text.includes("-") && !text.includes("_")) return out;
  for (const m of text.matchAll(ASCII.test(text) ? JOINED_IN_ASCII : JOINED_IN_TEXT)) out.push(tokenise(m[0]).join(""));
  return out;
}
