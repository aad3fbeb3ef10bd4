import { CopyButton } from "../ui/copy-button.tsx";
import { comfyCliTarget } from "./install-command.ts";
import { REGISTRY_PATHS } from "./registry-paths.ts";

/**
 * /ui/clients: how each ComfyUI tool is pointed at this instance, as the root README's
 * "Using it from ComfyUI tools" explains it (the clients' own code decides: comfy-cli reads
 * ENVIRONMENT, ComfyUI-Manager and the frontend have api.comfy.org compiled in).
 */
export function ClientsPage() {
  const origin = location.origin;
  const cli = comfyCliTarget(origin);
  const env = cli.prefix.trim() || "(unset)";
  return (
    <section aria-labelledby="clients-heading" class="prose">
      <h1 id="clients-heading">Using this registry from ComfyUI tools</h1>
      <p>
        This page is a summary of the README's section <em>Using it from ComfyUI tools</em>. Every read route of the public registry answers
        here in the same shape.
      </p>
      <section class="card" aria-labelledby="cli-h">
        <h2 id="cli-h">comfy-cli</h2>
        <p>
          comfy-cli picks its registry from <code>ENVIRONMENT</code>: unset is <code>https://api.comfy.org</code>, <code>staging</code> its
          staging twin, <code>dev</code> is <code>http://localhost:8080</code>. For this instance: <code>{env}</code>.
        </p>
        {!cli.direct && cli.forward && (
          <>
            <p>
              This page is served from <code>{origin}</code>, which comfy-cli cannot name: make <code>localhost:8080</code> this instance
              first.
            </p>
            <div class="copy-row">
              <code class="command">{cli.forward}</code>
              <CopyButton text={cli.forward} label="Copy command" />
            </div>
          </>
        )}
        <div class="copy-row">
          <code class="command">{`${cli.prefix}comfy node registry-install <id> [--version X]`}</code>
        </div>
        <p class="muted small">
          <code>comfy node install</code> runs ComfyUI-Manager's cm-cli, which asks the public registry, not this one.
        </p>
      </section>
      <section class="card" aria-labelledby="manager-h">
        <h2 id="manager-h">ComfyUI-Manager and the ComfyUI frontend</h2>
        <p>
          Both have <code>https://api.comfy.org</code> compiled in, with no setting. They reach this instance through a name override: make{" "}
          <code>api.comfy.org</code> resolve (hosts file or your DNS) to a reverse proxy you run that terminates TLS for that name and sends
          these paths, each with everything under it, to <code>{origin}</code>:
        </p>
        <ul class="paths" data-testid="registry-paths">
          {REGISTRY_PATHS.map((p) => (
            <li key={p}>
              <code>{p}</code>
            </li>
          ))}
        </ul>
        <p>
          That is the registry's read routes, the archives every <code>downloadUrl</code> here points at (<code>/archives</code>) and
          ComfyUI-Manager's channel (<code>/channel</code>). Everything else goes to the real api.comfy.org; in a closed network, where
          there is none, send every path here.
        </p>
        <p>
          Its certificate must be trusted by the machine (the Manager can skip the check with <code>bypass_ssl = True</code> in its{" "}
          <code>config.ini</code>; a browser cannot). The README gives an nginx configuration.
        </p>
      </section>
    </section>
  );
}
