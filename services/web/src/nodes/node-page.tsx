import type { Node } from "@app/contracts";
import { isPrivatePack } from "./private-pack.ts";
import type { ComponentChildren } from "preact";
import { checkArchive, isOwnArchive } from "../api/archive-check.ts";
import { getInstallVersion, getNodeForPage, getVersions } from "../api/registry.ts";
import { lastSearch } from "../search/search-state.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { countFormat, formatDate } from "../ui/format.ts";
import { PlatformList } from "../ui/platform-list.tsx";
import { useLatest } from "../ui/use-latest.ts";
import { ClassList } from "./class-list.tsx";
import { InstallBox } from "./install-box.tsx";
import { readLicense, type License } from "./license.ts";
import { VersionTable } from "./version-list.tsx";
import { MarkdownText } from "../ui/markdown-text.tsx";

/**
 * /ui/nodes/{id}: how to install the pack from this instance first, then its versions, then
 * what it is (facts, node classes). A banned or deleted pack says so, with the registry's reason.
 */
export function NodePage({ id }: { id: string }) {
  const node = useLatest(`${id}|node`, (signal) => getNodeForPage(id, signal));
  const install = useLatest(`${id}|install`, (signal) => getInstallVersion(id, signal));
  const versions = useLatest(`${id}|versions`, (signal) => getVersions(id, signal));
  const n = node.data;
  const banned = n?.status === "NodeStatusBanned";
  const deleted = n?.status === "NodeStatusDeleted";
  const installs = install.data ?? null;
  const offered = installs?.downloadUrl;
  const installUrl = isOwnArchive(offered) ? offered : null;
  const installArchive = useLatest(installUrl, (signal) => checkArchive(installUrl!, signal));
  const installArchiveState = installArchive.dataKey === installUrl ? installArchive.data : null;

  return (
    <article aria-labelledby="node-heading">
      <p>
        <a href={lastSearch()}>← Back to the search</a>
      </p>
      {node.loading && !n && <p>Loading {id}…</p>}
      <ErrorBox message={node.error} />
      {n && (
        <>
          <h1 id="node-heading">
            {n.name ?? n.id}
            {banned && <span class="badge danger">banned</span>}
            {deleted && <span class="badge danger">deleted</span>}
            {isPrivatePack(n) && (
              <span class="badge ok" title="published to this instance by its publisher, not mirrored">
                private
              </span>
            )}
          </h1>
          <p class="meta">
            <code>{n.id}</code>
            {n.publisher && <span> · by {n.publisher.name ?? n.publisher.id}</span>}
            <Popularity node={n} />
          </p>
          {(banned || deleted) && (
            <div class="notice danger" role="status" data-testid="pack-status">
              <strong>{banned ? "This pack is banned from the registry." : "This pack was deleted from the registry."}</strong>{" "}
              {n.status_detail ? (
                <>
                  Reason: <q>{n.status_detail}</q>.{" "}
                </>
              ) : (
                "The registry gives no reason. "
              )}
              It cannot be installed from here.
            </div>
          )}
          {n.description && (
            <p class="lead" data-testid="description">
              <MarkdownText text={n.description} />
            </p>
          )}
          {!banned && !deleted && (
            <InstallBox id={n.id ?? id} install={installs} loading={install.loading && !install.data} archive={installArchiveState} />
          )}
          <VersionTable
            id={n.id ?? id}
            versions={versions.data}
            error={versions.error}
            installs={installs?.version}
            installArchive={installArchiveState}
            packBanned={banned || deleted}
          />
          <div class="node-grid">
            <section class="card about" aria-labelledby="about-h">
              <h2 id="about-h">About</h2>
              <Facts node={n} />
            </section>
            <ClassList id={n.id ?? id} version={installs?.version ?? "latest"} banned={banned} preempted={n.preempted_app_node_names} />
          </div>
          <details class="card">
            <summary>Everything the API answered (GET /nodes/{n.id})</summary>
            <pre class="json">{JSON.stringify(n, null, 2)}</pre>
          </details>
        </>
      )}
    </article>
  );
}

/** Stars, downloads and rating only when they say something: no "0.0" rating, no zero counts. */
function Popularity({ node: n }: { node: Node }) {
  const stars = n.repo_stars ?? n.github_stars;
  return (
    <>
      {stars ? <span data-testid="stars"> · ★ {countFormat.format(stars)} stars</span> : null}
      {n.downloads ? <span data-testid="downloads"> · {countFormat.format(n.downloads)} downloads</span> : null}
      {n.rating ? <span data-testid="rating"> · rated {n.rating.toFixed(1)}</span> : null}
    </>
  );
}

function LicenseText({ license }: { license: License }) {
  if (license.kind === "text") return <>{license.text}</>;
  return license.href ? (
    <a href={license.href} rel="noopener noreferrer" target="_blank">
      {license.file}
    </a>
  ) : (
    <>
      see <code>{license.file}</code> in the pack
    </>
  );
}

function Facts({ node: n }: { node: Node }) {
  const license = readLicense(n.license, n.repository);
  return (
    <dl class="facts">
      <Fact term="Repository">
        {n.repository && (
          <a href={n.repository} rel="noopener noreferrer" target="_blank">
            {n.repository}
          </a>
        )}
      </Fact>
      <Fact term="Author">{n.author}</Fact>
      <Fact term="Publisher">{n.publisher && `${n.publisher.name ?? ""} (${n.publisher.id ?? "?"})`}</Fact>
      <Fact term="License">{license && <LicenseText license={license} />}</Fact>
      <Fact term="Category">{n.category}</Fact>
      <Fact term="Tags">{n.tags?.length ? n.tags.join(", ") : undefined}</Fact>
      <Fact term="Created">{formatDate(n.created_at) || undefined}</Fact>
      <Fact term="Latest">
        {n.latest_version?.version &&
          `${n.latest_version.version}${n.latest_version.createdAt ? `, ${formatDate(n.latest_version.createdAt)}` : ""}`}
      </Fact>
      <Fact term="Changelog">{n.latest_version?.changelog}</Fact>
      <Fact term="Dependencies">{n.latest_version?.dependencies?.length ? n.latest_version.dependencies.join(", ") : undefined}</Fact>
      <Fact term="ComfyUI">{n.supported_app_version}</Fact>
      <Fact term="Frontend">{n.supported_app_frontend_version}</Fact>
      <div class="fact-row">
        <dt>Platforms</dt>
        <dd>
          <PlatformList os={n.supported_os} accelerators={n.supported_accelerators} />
        </dd>
      </div>
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
