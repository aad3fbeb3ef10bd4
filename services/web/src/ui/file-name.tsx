import { splitName } from "./format.ts";

/** A file name that shortens in the middle: the stem takes the ellipsis, the extension stays. */
export function FileName({ name, class: cls = "" }: { name: string; class?: string }) {
  const { stem, ext } = splitName(name);
  return (
    <span class={`file-name ${cls}`} title={name}>
      <span class="stem">{stem}</span>
      {ext && <span class="ext">{ext}</span>}
    </span>
  );
}
