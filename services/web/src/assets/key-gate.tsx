import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { forgetKey, readKey, saveKey } from "../api/assets.ts";

/**
 * The asset pages need an API key: asked once, kept in this browser. Children get the key and
 * a way to ask again (after a 401, the page offers to change it).
 */
export function KeyGate({ children }: { children: (key: string, changeKey: () => void) => ComponentChildren }) {
  const [key, setKey] = useState(readKey);
  const [draft, setDraft] = useState("");
  const changeKey = () => {
    forgetKey();
    setKey(null);
  };
  if (key) {
    return (
      <>
        <p class="key-line muted">
          Using the API key saved in this browser.{" "}
          <button type="button" class="link" onClick={changeKey}>
            Change key
          </button>
        </p>
        {children(key, changeKey)}
      </>
    );
  }
  return (
    <form
      class="card key-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!draft.trim()) return;
        saveKey(draft);
        setKey(draft.trim());
        setDraft("");
      }}
    >
      <h2>API key</h2>
      <p>
        Uploads and images need a key (<code>API_KEYS</code>, or <code>pnpm apikey create --label me</code>). It is kept in this browser's
        storage and sent as <code>X-API-Key</code>.
      </p>
      <label for="api-key">API key</label>
      <div class="copy-row">
        <input id="api-key" type="password" autoComplete="off" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} required />
        <button type="submit">Save key</button>
      </div>
    </form>
  );
}
