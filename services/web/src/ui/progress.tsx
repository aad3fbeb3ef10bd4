export function Progress({ label, sent, total }: { label: string; sent: number; total: number }) {
  const pct = total > 0 ? Math.min(100, Math.round((sent / total) * 100)) : 0;
  return (
    <div class="progress">
      <label>
        {label} {pct}%
        <progress max={100} value={pct} />
      </label>
    </div>
  );
}
