import type { Node } from "@app/contracts";
import { isPrivatePack } from "../nodes/private-pack.ts";
import { Highlight } from "./highlight.tsx";
import { PlatformList } from "../ui/platform-list.tsx";
import { markdownPlainText } from "../ui/markdown-text.tsx";

const count = new Intl.NumberFormat("en");

export function nodeHref(node: Node, includeBanned: boolean): string {
  return `/ui/nodes/${encodeURIComponent(node.id ?? "")}${includeBanned ? "?include_banned=true" : ""}`;
}

export function ResultCard({ node, terms, includeBanned }: { node: Node; terms: string[]; includeBanned: boolean }) {
  const publisher = node.publisher?.name ?? node.publisher?.id;
  return (
    <li class="card result">
      <h3 class="result-title">
        <a href={nodeHref(node, includeBanned)}>
          <Highlight text={node.name ?? node.id ?? ""} terms={terms} />
        </a>
        {node.status === "NodeStatusBanned" && <span class="badge danger">banned</span>}
        {isPrivatePack(node) && (
          <span class="badge ok" title="published to this instance by its publisher, not mirrored">
            private
          </span>
        )}
      </h3>
      <p class="meta">
        <code class="node-id">
          <Highlight text={node.id ?? ""} terms={terms} />
        </code>
        {publisher && <span> · by {publisher}</span>}
        {node.latest_version?.version && <span> · v{node.latest_version.version}</span>}
      </p>
      {node.description && (
        <p class="description">
          <Highlight text={markdownPlainText(node.description)} terms={terms} />
        </p>
      )}
      <p class="stats">
        {node.repo_stars ? <span title="stars on the repository">★ {count.format(node.repo_stars)}</span> : null}
        {node.downloads ? <span title="downloads">⬇ {count.format(node.downloads)}</span> : null}
        {node.repository && (
          <a href={node.repository} rel="noopener noreferrer" target="_blank">
            repository
          </a>
        )}
      </p>
      <PlatformList os={node.supported_os} accelerators={node.supported_accelerators} />
    </li>
  );
}
