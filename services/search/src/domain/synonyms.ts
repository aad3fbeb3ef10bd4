/**
 * Abbreviations the ecosystem names packs by, and the words people type for them: a query
 * holding the words also matches the abbreviation (`remove background` finds ComfyUI-RMBG). One
 * table for both engines (Meilisearch: its `synonyms` setting). Kept short on purpose: each
 * entry is a name people use for a need, not a guess at intent.
 */
export const ABBREVIATIONS: Readonly<Record<string, readonly string[]>> = {
  rmbg: ["remove background", "background removal", "background remover", "remove bg"],
  tts: ["text to speech"],
  asr: ["speech to text", "speech recognition"],
  stt: ["speech to text"],
  vfi: ["frame interpolation", "video frame interpolation"],
  i2v: ["image to video"],
  t2v: ["text to video"],
  sam: ["segment anything"],
  llm: ["large language model"],
  vlm: ["vision language model"],
};

/** The phrases as token lists, longest first, each with the abbreviation it stands for. */
export const SYNONYM_PHRASES: readonly { words: readonly string[]; term: string }[] = Object.entries(ABBREVIATIONS)
  .flatMap(([term, phrases]) => phrases.map((p) => ({ words: p.split(" "), term })))
  .sort((a, b) => b.words.length - a.words.length);
