import { formatBytes } from "./format.ts";

export function Progress({ label, sent, total }: { label: string; sent: number; total: number }) {
  const pct = total > 0 ? Math.min(100, Math.round((sent / total) * 100)) : 0;
  return (
    <div class="progress" data-testid="progress" data-sent={sent} data-total={total}>
      <label>
        <span>
          {label} {pct}%
          {total > 0 && (
            <span class="muted">
              {" "}
              · {formatBytes(sent)} of {formatBytes(total)}
            </span>
          )}
        </span>
        <progress max={100} value={pct} />
      </label>
    </div>
  );
}
