import type { NodeVersion } from "@app/contracts";
import { getVersions } from "../api/registry.ts";
import { useLatest } from "../ui/use-latest.ts";

const date = (iso?: string) => (iso ? new Date(iso).toLocaleDateString("en", { year: "numeric", month: "short", day: "numeric" }) : "");

/** A status as a badge: green for active, red for banned or deleted, amber for the rest (pending, flagged). */
function StatusBadge({ status }: { status?: NodeVersion["status"] }) {
  if (!status) return null;
  const word = status.replace("NodeVersionStatus", "");
  const tone = word === "Active" ? "ok" : word === "Banned" || word === "Deleted" ? "danger" : "";
  return <span class={`badge ${tone}`}>{word.toLowerCase()}</span>;
}

/**
 * Every version GET /nodes/{id}/versions answers, newest first, with its status; the one
 * `comfy node install` (and ComfyUI-Manager) would take is marked.
 */
export function VersionList({ id, installs }: { id: string; installs?: string }) {
  const versions = useLatest(`${id}|versions`, (signal) => getVersions(id, signal));
  return (
    <section class="card" aria-labelledby="versions-h">
      <h2 id="versions-h">Versions</h2>
      {versions.error && <p class="muted">{versions.error}</p>}
      {versions.data && versions.data.length === 0 && <p class="muted">The catalog knows no version of this pack.</p>}
      {versions.data && versions.data.length > 0 && (
        <div class="table-wrap">
          <table class="versions">
            <thead>
              <tr><th scope="col">Version</th><th scope="col">Released</th><th scope="col">Status</th><th scope="col">File</th></tr>
            </thead>
            <tbody>
              {versions.data.map((v) => (
                <tr key={v.version} data-version={v.version}>
                  <td>
                    <code>{v.version}</code>
                    {v.version === installs && <span class="badge ok" title="the version an install without a version takes">installs</span>}
                  </td>
                  <td>{date(v.createdAt)}</td>
                  <td>
                    <StatusBadge status={v.status} />
                    {v.deprecated && <span class="badge">deprecated</span>}
                  </td>
                  <td>{v.downloadUrl ? <a href={v.downloadUrl} rel="noopener noreferrer">.zip</a> : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
