import { useState } from "preact/hooks";

/** Copies `text`; `label` names what is copied for screen readers and the button's text. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  // Never rejects (a missing clipboard is caught), so a click need not wait for it.
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 2000);
    } catch {
      setDone(false); // no clipboard (plain http on another host): the text stays on show to select
    }
  };
  return (
    <button type="button" class="copy" onClick={() => void copy()} data-copy={text} aria-live="polite">
      {done ? "Copied" : label}
    </button>
  );
}
