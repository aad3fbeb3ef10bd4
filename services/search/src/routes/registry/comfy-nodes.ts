import { ComfyNodesQuery, type ComfyNode, type ComfyNodesPage } from "@app/contracts";
import type { Response, Router } from "express";
import type { VersionClasses } from "../../adapters/registry/version-classes.ts";
import type { SearchEngine } from "../../ports/search-engine.ts";
import type { StoredNode } from "../../domain/catalog-record.ts";
import { bestProvider } from "../../domain/class-providers.ts";
import { toApiNodeJson } from "../../fast/node-output.ts";
import { parseParams } from "../../domain/query.ts";
import { classesVersion, versionNamed } from "../../domain/versions.ts";
import { describe } from "../../adapters/registry/http.ts";
import { SearchErrorCode, sendError, sendJson, sendJsonText } from "../errors.ts";
import { findPack, quoted } from "./pack.ts";

/** A version's node classes, paged as the registry pages them, and the pack that provides a class. */
export function comfyNodeRoutes(router: Router, engine: SearchEngine, versionClasses?: VersionClasses): void {
  // The catalog holds the classes of one version per pack (`app_node_names_version`, else the
  // install-path version): that version's number or `latest` answers them. Another version the
  // catalog knows is read through from the mirrored registry and kept, or was carried in by a bundle
  // (`versionClasses`); when none is kept or held upstream, it answers 404 saying so, as does an unknown one.
  router.get("/nodes/:nodeId/versions/:version/comfy-nodes", async (req, res) => {
    const parsed = parseParams(ComfyNodesQuery, req.query);
    if (!parsed.ok) return sendError(res, 400, SearchErrorCode.invalidParameter, parsed.message);
    const { page, limit, include_banned } = parsed.value;
    const pack = await findPack(engine, req, res, { includeBanned: include_banned });
    if (!pack) return;
    const asked = req.params.version;
    const known = classesVersion(pack);
    if (asked !== "latest" && asked !== known) {
      const other = versionNamed(pack, asked) && versionClasses ? await readThrough(versionClasses, pack.id, asked, res) : undefined;
      if (other === null) return;
      if (other) return sendJson(res, classesPage(other, page, limit));
      const which = known ? `version ${known} (or \`latest\`) only` : "`latest` only";
      const exists = versionNamed(pack, asked) ? `version ${quoted(asked, 100)} exists, but ` : "";
      return sendError(
        res,
        404,
        SearchErrorCode.notFound,
        `${exists}the catalog holds the node classes of ${quoted(pack.id)} for ${which}`,
      );
    }
    sendJson(res, classesPage(classesOf(pack), page, limit));
  });

  // The frontend asks this for each node of a workflow it has no definition for.
  router.get("/comfy-nodes/:name/node", async (req, res) => {
    const name = req.params.name;
    const pack = bestProvider(name, await engine.providersOf(name));
    if (!pack) return sendError(res, 404, SearchErrorCode.notFound, `no node pack provides the node class ${quoted(name)}`);
    const json = toApiNodeJson(pack);
    sendJsonText(res, { json, bytes: Buffer.byteLength(json) });
  });
}

/**
 * The classes the catalog holds for the pack: each with its whole definition where the source
 * gave one (a mirror keeps the registry's ComfyNodes), else its name alone; in `app_node_names`'
 * order, which the search index reads.
 */
function classesOf(pack: StoredNode): ComfyNode[] {
  const defs = new Map((pack.app_nodes ?? []).map((d) => [d.comfy_node_name, d]));
  return (pack.app_node_names ?? []).map((name) => defs.get(name) ?? { comfy_node_name: name });
}

function classesPage(classes: readonly ComfyNode[], page: number, limit: number): ComfyNodesPage {
  return { comfy_nodes: classes.slice((page - 1) * limit, page * limit), totalNumberOfPages: Math.ceil(classes.length / limit) };
}

/** Another version's classes from the registry; null when a 503 has been sent (the registry cannot be reached). */
async function readThrough(
  versionClasses: VersionClasses,
  id: string,
  version: string,
  res: Response,
): Promise<ComfyNode[] | undefined | null> {
  try {
    return await versionClasses.read(id, version);
  } catch (err) {
    sendError(
      res,
      503,
      SearchErrorCode.unavailable,
      `the classes of ${quoted(id)} version ${quoted(version, 100)} are not held here and the registry could not be reached: ${describe(err)}`,
    );
    return null;
  }
}
