import type { NodeVersion } from "@app/contracts";
import { useState } from "preact/hooks";
import { archiveProblem, checkArchive, isOwnArchive, type ArchiveState } from "../api/archive-check.ts";
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
export function VersionTable({
  id,
  versions,
  error,
  installs,
  installArchive,
  packBanned,
}: {
  id: string;
  versions: NodeVersion[] | null;
  error: string | null;
  installs?: string;
  installArchive?: ArchiveState | null;
  packBanned: boolean;
}) {
  const [all, setAll] = useState(false);
  // Archives asked about by a click on their download (the install-path one is asked on load).
  const [asked, setAsked] = useState<Record<string, ArchiveState>>({});
  const stateOf = (v: string): ArchiveState | undefined => asked[v] ?? (v === installs && installArchive ? installArchive : undefined);
  // A download this instance cannot give answers a JSON 503: ask first, and say so in the row instead.
  const download = (e: MouseEvent, v: NodeVersion) => {
    if (!isOwnArchive(v.downloadUrl) || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    const url = v.downloadUrl;
    void checkArchive(url).then(
      (state) => {
        setAsked((a) => ({ ...a, [v.version ?? ""]: state }));
        if (state === "available" || state === "unknown") location.assign(url);
      },
      () => location.assign(url),
    );
  };
  const shown = versions && !all ? versions.slice(0, FOLDED_AT) : versions;
  return (
    <section class="card" aria-labelledby="versions-h">
      <h2 id="versions-h">Versions{versions ? ` (${versions.length})` : ""}</h2>
      {error && (
        <p class="muted" data-testid="versions-error">
          {packBanned ? "The registry lists no versions of a banned pack." : error}
        </p>
      )}
      {!versions && !error && <p class="muted">Loading versions…</p>}
      {versions && versions.length === 0 && <p class="muted">The catalog knows no version of this pack.</p>}
      {shown && shown.length > 0 && (
        <div class="table-wrap">
          <table class="versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Released</th>
                <th scope="col">Status</th>
                <th scope="col">Install</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((v) => {
                const offered = !packBanned && isInstallable(v);
                const problem = offered && v.version ? archiveProblem(stateOf(v.version) ?? "unknown", v.version) : null;
                return (
                  <tr key={v.version} data-version={v.version} data-status={statusWord(v.status)}>
                    <td>
                      <code>{v.version}</code>
                      {v.version === installs && offered && (
                        <span class="badge ok" title="the version an install without --version takes">
                          installs
                        </span>
                      )}
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
                          {v.downloadUrl && (
                            <a class="download" href={v.downloadUrl} rel="noopener noreferrer" onClick={(e) => download(e, v)}>
                              .zip
                            </a>
                          )}
                          {problem && (
                            <span class="archive-problem error-text" role="status" title={problem}>
                              {stateOf(v.version!) === "missing" ? "no archive" : "archive unavailable now"}
                            </span>
                          )}
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
