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
  const spaced = name.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2").replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2");
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
  "comfyui",
  "comfy",
  "ui",
  "nodes",
  "node",
  "pack",
  "custom",
  "for",
  "the",
  "a",
  "an",
  "and",
  "of",
  "to",
  "in",
  "with",
  "on",
  "by",
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
