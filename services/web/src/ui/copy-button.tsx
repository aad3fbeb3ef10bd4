import { useState } from "preact/hooks";

export function CopyButton({ text }: { text: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
    } catch {
      setDone(false); // no clipboard (plain http on another host): the field is selected for Ctrl+C instead
    }
  };
  return <button type="button" onClick={copy} aria-live="polite">{done ? "Copied" : "Copy"}</button>;
}
