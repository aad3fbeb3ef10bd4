import type { ComponentChildren } from "preact";

/** An API refusal in the API's own words, announced to screen readers as it appears. */
export function ErrorBox({ message, children }: { message: string | null; children?: ComponentChildren }) {
  if (!message) return null;
  return (
    <div class="error" role="alert">
      <strong>Error:</strong> {message}
      {children}
    </div>
  );
}
