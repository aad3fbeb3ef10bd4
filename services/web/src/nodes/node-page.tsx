import type { Node, NodeVersion } from "@app/contracts";
import type { ComponentChildren } from "preact";
import { getComfyNodes, getNode } from "../api/registry.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { PlatformList } from "../ui/platform-list.tsx";
import { useLatest } from "../ui/use-latest.ts";
import { CopyButton } from "../ui/copy-button.tsx";
import { lastSearch } from "../search/search-state.ts";
import { VersionList } from "./version-list.tsx";

const count = new Intl.NumberFormat("en");
const date = (iso?: string) => (iso ? new Date(iso).toLocaleDateString("en", { year: "numeric", month: "short", day: "numeric" }) : undefined);

/** /ui/nodes/{id}: one node as GET /nodes/{id} answers it, with its node classes, its versions and how to install it. */
export function NodePage({ id, includeBanned }: { id: string; includeBanned: boolean }) {
  const node = useLatest(`${id}|${includeBanned}`, (signal) => getNode(id, includeBanned, signal));
  const classes = useLatest(`${id}|classes`, (signal) => getComfyNodes(id, "latest", signal));
  const n = node.data;

  return (
    <article aria-labelledby="node-heading">
      <p><a href={lastSearch()}>← Back to the search</a></p>
      {node.loading && !n && <p>Loading {id}…</p>}
      <ErrorBox message={node.error} />
      {n && (
        <>
          <h1 id="node-heading">
            {n.name ?? n.id}
            {n.status === "NodeStatusBanned" && <span class="badge danger">banned</span>}
          </h1>
          <p class="meta"><code>{n.id}</code>{n.publisher && <span> · published by {n.publisher.name ?? n.publisher.id}</span>}</p>
          {n.description && <p class="lead">{n.description}</p>}
          <div class="install card">
            <h2 id="install-h">Install</h2>
            <div class="copy-row">
              <code id="install" class="command" aria-labelledby="install-h">comfy node install {n.id}</code>
              <CopyButton text={`comfy node install ${n.id}`} />
            </div>
          </div>
          <div class="node-grid">
            <section class="card about" aria-labelledby="about-h">
              <h2 id="about-h">About</h2>
              <Facts node={n} />
            </section>
            <section class="card" aria-labelledby="classes-h">
              <h2 id="classes-h">Node classes</h2>
              {classes.error && <p class="muted">{classes.error}</p>}
              {classes.data && classes.data.comfy_nodes.length === 0 && <p class="muted">This pack lists no node classes.</p>}
              {classes.data && classes.data.comfy_nodes.length > 0 && (
                <ul class="classes">
                  {classes.data.comfy_nodes.map((c) => <li key={c.comfy_node_name}><code>{c.comfy_node_name}</code></li>)}
                </ul>
              )}
              {n.preempted_app_node_names?.length ? (
                <>
                  <h3>Preempted node names</h3>
                  <ul class="classes">{n.preempted_app_node_names.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
                </>
              ) : null}
            </section>
            {n.latest_version && (
              <section class="card" aria-labelledby="version-h">
                <h2 id="version-h">Latest version {n.latest_version.version}</h2>
                <VersionFacts v={n.latest_version} />
              </section>
            )}
          </div>
          <VersionList id={n.id ?? id} installs={n.latest_version?.version} />
          <details class="card">
            <summary>Everything the API answered (GET /nodes/{n.id})</summary>
            <pre class="json">{JSON.stringify(n, null, 2)}</pre>
          </details>
        </>
      )}
    </article>
  );
}

function Facts({ node: n }: { node: Node }) {
  return (
    <dl class="facts">
      <Fact term="Repository">{n.repository && <a href={n.repository} rel="noopener noreferrer" target="_blank">{n.repository}</a>}</Fact>
      <Fact term="Author">{n.author}</Fact>
      <Fact term="Publisher">{n.publisher && `${n.publisher.name ?? ""} (${n.publisher.id ?? "?"})`}</Fact>
      <Fact term="Stars">{n.repo_stars !== undefined && count.format(n.repo_stars)}</Fact>
      <Fact term="Downloads">{n.downloads !== undefined && count.format(n.downloads)}</Fact>
      <Fact term="Rating">{n.rating !== undefined && n.rating.toFixed(1)}</Fact>
      <Fact term="License">{n.license}</Fact>
      <Fact term="Category">{n.category}</Fact>
      <Fact term="Tags">{n.tags?.length ? n.tags.join(", ") : undefined}</Fact>
      <Fact term="Created">{date(n.created_at)}</Fact>
      <Fact term="Status">{n.status && `${n.status.replace("NodeStatus", "")}${n.status_detail ? ` — ${n.status_detail}` : ""}`}</Fact>
      <Fact term="App version">{n.supported_app_version}</Fact>
      <Fact term="Frontend version">{n.supported_app_frontend_version}</Fact>
      <div class="fact-row">
        <dt>Platforms</dt>
        <dd><PlatformList os={n.supported_os} accelerators={n.supported_accelerators} /></dd>
      </div>
    </dl>
  );
}

function VersionFacts({ v }: { v: NodeVersion }) {
  return (
    <dl class="facts">
      <Fact term="Released">{date(v.createdAt)}</Fact>
      <Fact term="Status">{v.status?.replace("NodeVersionStatus", "")}</Fact>
      <Fact term="Changelog">{v.changelog}</Fact>
      <Fact term="Dependencies">{v.dependencies?.length ? v.dependencies.join(", ") : undefined}</Fact>
      <Fact term="Download">{v.downloadUrl && <a href={v.downloadUrl} rel="noopener noreferrer">{v.downloadUrl}</a>}</Fact>
      <Fact term="Deprecated">{v.deprecated ? "yes" : undefined}</Fact>
    </dl>
  );
}

function Fact({ term, children }: { term: string; children: ComponentChildren }) {
  if (children === undefined || children === null || children === false || children === "") return null;
  return (
    <div class="fact-row">
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
