/**
 * Text the asset API keeps in database columns (tags, names) or compares against them (tag
 * filters, `name_contains`, `prefix`, a cursor's value) must be text both databases keep whole:
 * - U+0000: node-sqlite3-wasm binds a string as a NUL-terminated C string, so SQLite would keep
 *   `".\u0000x"` as `"."` (silently, and two such tags then collide in `asset_tags`);
 *   PostgreSQL refuses it in `text` outright.
 * - an unpaired surrogate (`"\ud800"`): not text in UTF-8; `pg` sends it as U+FFFD, so it would
 *   be changed (and two of them collide).
 * Such input is the client's mistake and is refused (400), never stored cut short or changed.
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSTORABLE_TEXT = "must not contain U+0000 or an unpaired surrogate (text the database cannot keep whole)";

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}
