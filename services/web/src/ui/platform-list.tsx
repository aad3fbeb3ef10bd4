/** Supported OS and accelerators as chips; an empty list means the node claims no restriction. */
export function PlatformList({ os, accelerators }: { os?: string[]; accelerators?: string[] }) {
  if (!os?.length && !accelerators?.length) return <p class="chips muted">Any OS, any accelerator</p>;
  return (
    <p class="chips">
      {(os ?? []).map((v) => (
        <span class="chip" key={`os-${v}`}>
          {v}
        </span>
      ))}
      {(accelerators ?? []).map((v) => (
        <span class="chip accel" key={`acc-${v}`}>
          {v}
        </span>
      ))}
    </p>
  );
}
