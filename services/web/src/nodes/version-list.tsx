import type { NodeVersion } from "@app/contracts";
import { useState } from "preact/hooks";
import { CopyButton } from "../ui/copy-button.tsx";
import { formatDate } from "../ui/format.ts";
import { registryInstallCommand } from "./install-command.ts";
import { isInstallable, statusTone, statusWord } from "./version-status.ts";

const FOLDED_AT = 8;

/**
 * Every version GET /nodes/{id}/versions answers, newest first: its status (with the registry's
 * reason for a banned or deleted one), its date, and for an installable one its own install
 * command and archive. The version an install without `--version` takes is marked "installs".
 */
export function VersionTable({ id, versions, error, installs, packBanned }: { id: string; versions: NodeVersion[] | null; error: string | null; installs?: string; packBanned: boolean }) {
  const [all, setAll] = useState(false);
  const shown = versions && !all ? versions.slice(0, FOLDED_AT) : versions;
  return (
    <section class="card" aria-labelledby="versions-h">
      <h2 id="versions-h">Versions{versions ? ` (${versions.length})` : ""}</h2>
      {error && <p class="muted" data-testid="versions-error">{packBanned ? "The registry lists no versions of a banned pack." : error}</p>}
      {!versions && !error && <p class="muted">Loading versions…</p>}
      {versions && versions.length === 0 && <p class="muted">The catalog knows no version of this pack.</p>}
      {shown && shown.length > 0 && (
        <div class="table-wrap">
          <table class="versions">
            <thead>
              <tr><th scope="col">Version</th><th scope="col">Released</th><th scope="col">Status</th><th scope="col">Install</th></tr>
            </thead>
            <tbody>
              {shown.map((v) => {
                const offered = !packBanned && isInstallable(v);
                return (
                  <tr key={v.version} data-version={v.version} data-status={statusWord(v.status)}>
                    <td>
                      <code>{v.version}</code>
                      {v.version === installs && offered && <span class="badge ok" title="the version an install without --version takes">installs</span>}
                    </td>
                    <td>{formatDate(v.createdAt)}</td>
                    <td>
                      {v.status && <span class={`badge ${statusTone(v.status)}`}>{statusWord(v.status)}</span>}
                      {v.deprecated && <span class="badge">deprecated</span>}
                      {v.status_reason && !offered && <span class="reason">{v.status_reason}</span>}
                    </td>
                    <td class="install-cell">
                      {offered ? (
                        <>
                          <CopyButton text={registryInstallCommand(location.origin, id, v.version)} label="Copy command" />
                          {v.downloadUrl && <a class="download" href={v.downloadUrl} rel="noopener noreferrer">.zip</a>}
                        </>
                      ) : (
                        <span class="muted">not installable</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {versions && versions.length > FOLDED_AT && (
        <button type="button" class="link" onClick={() => setAll(!all)} aria-expanded={all}>
          {all ? "Show fewer versions" : `Show all ${versions.length} versions`}
        </button>
      )}
    </section>
  );
}
