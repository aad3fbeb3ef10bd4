import type { NodeVersion } from "@app/contracts";
import { archiveProblem, type ArchiveState } from "../api/archive-check.ts";
import { CopyButton } from "../ui/copy-button.tsx";
import { comfyCliTarget, registryInstallCommand } from "./install-command.ts";

/**
 * The first thing on a node page: the command that installs this pack from this instance (not
 * from the public registry), or why there is none; and where the other ComfyUI tools are told
 * how to use this instance.
 */
export function InstallBox({
  id,
  install,
  loading,
  archive,
}: {
  id: string;
  install: NodeVersion | null;
  loading: boolean;
  archive?: ArchiveState | null;
}) {
  const origin = location.origin;
  const problem = install?.version && archive ? archiveProblem(archive, install.version) : null;
  const target = comfyCliTarget(origin);
  const command = registryInstallCommand(origin, id);
  return (
    <section class="install card" aria-labelledby="install-h">
      <h2 id="install-h">Install from this registry</h2>
      {loading ? (
        <p class="muted">Asking which version installs…</p>
      ) : install ? (
        <>
          <div class="copy-row">
            <code id="install" class="command">
              {command}
            </code>
            <CopyButton text={command} label="Copy command" />
          </div>
          {problem && (
            <p class="notice small" role="status" data-testid="archive-problem">
              {problem}
            </p>
          )}
          <p class="muted small">
            Installs version <strong data-testid="install-version">{install.version}</strong> from{" "}
            {target.direct ? "this registry" : <code>localhost:8080</code>}.
          </p>
          {!target.direct && target.forward && (
            <details class="small forward">
              <summary>This page is not on localhost:8080</summary>
              comfy-cli names only <code>localhost:8080</code> besides the public registry: forward it here first with{" "}
              <code>{target.forward}</code>.
            </details>
          )}
        </>
      ) : (
        <p class="notice" data-testid="no-install">
          <strong>No installable version.</strong> Every version of this pack is deleted or banned, or none is known: there is nothing to
          install.
        </p>
      )}
      <p class="small">
        ComfyUI-Manager and the ComfyUI frontend: <a href="/ui/clients">using this registry from ComfyUI tools</a>.
      </p>
    </section>
  );
}
