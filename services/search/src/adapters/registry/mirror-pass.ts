import type { StoredNode } from "../../domain/catalog-record.ts";
import { readAllRecords, type LoadProgress } from "../../ports/source-base.ts";
import type { NodeVersion } from "@app/contracts";
import { readAllVersions, type AllVersions } from "./all-versions.ts";
import { describe, RegistryHttp } from "./http.ts";
import { MIRROR_DEFAULTS, type MirrorOptions } from "./mirror-options.ts";
import type { PackListReport } from "./pack-list.ts";
import { detailsOf, detailsStale, readPackDetails, withDetails, withoutDetails } from "./pack-details.ts";
import { RegistryApiSource, type RegistryLoadOptions } from "./registry-source.ts";

/** Where a mirror run stands: what /readyz shows while it runs and after. */
export interface MirrorProgress {
  pass: "full" | "incremental";
  /** `failed`: the pass ended in an error (the catalog's `nextTry` says when the next one starts). */
  phase: "listing" | "details" | "done" | "failed";
  startedAt: string;
  /** Packs read from the list this pass, and the registry's count of them. */
  packs: { read: number; total: number | null };
  /** Packs whose versions were asked for this pass, of those to ask. */
  versions: { done: number; of: number };
  /** Of those, packs with an install-path version whose class list is now known (read, or kept for an unchanged version). */
  classes: number;
  /** Packs whose versions or classes could not be read (they keep what was known). */
  errors: number;
  /** Requests sent to the registry this pass, retries included. */
  requests: number;
}

export interface MirrorPassRun extends Pick<RegistryLoadOptions, "onBadRecord" | "onWarning" | "fetch" | "signal"> {
  /** A full pass reads the whole list (and so sees deletions) and every pack's versions; otherwise only packs updated after `since`. */
  full: boolean;
  since?: string;
  mirror?: MirrorOptions;
  /** Each step of the pass, up to its details; the caller reports "done" once it has served the result. */
  onProgress?: (p: MirrorProgress) => void;
  /** The catalog so far, every `landEveryMs` while details are read (a long first mirror serves classes as they come). */
  onPartial?: (records: StoredNode[]) => Promise<void>;
  /** A full pass's pack list, with the details already known, before any detail is read; throwing stops the run. */
  onListed?: (records: StoredNode[], list: { report: PackListReport; kept: string[] }) => Promise<void>;
}

export interface MirrorPassOutcome {
  records: StoredNode[];
  /** False when an incremental pass found nothing updated: the catalog is as it was. */
  changed: boolean;
  load: LoadProgress;
  list: PackListReport;
  /** Packs of the previous catalog kept because an incomplete list did not return them. */
  kept: string[];
  /** Why packs' details could not be read (`id: reason`). */
  errors: string[];
  progress: MirrorProgress;
}

/**
 * One pass of a registry mirror: the pack list (`readPackList`), then each pack's versions and
 * install-path classes (`readPackDetails`), a bounded number at once; a pass with many packs to
 * read takes the versions from the registry's list of every version (`readAllVersions`). A pack keeps the details
 * it had until new ones are read; a full pass whose list came back short keeps the previous
 * catalog's packs it did not see (named in `kept`), so a pack is never silently lost.
 */
export async function readMirrorPass(
  base: string,
  previous: readonly StoredNode[] | undefined,
  run: MirrorPassRun,
): Promise<MirrorPassOutcome> {
  const o = { ...MIRROR_DEFAULTS, ...run.mirror };
  // Our own controller, so requests still in flight stop when the pass fails or is abandoned.
  const stop = new AbortController();
  const onOuterAbort = () => stop.abort(run.signal?.reason);
  if (run.signal?.aborted) throw run.signal.reason;
  run.signal?.addEventListener("abort", onOuterAbort, { once: true });
  const http = new RegistryHttp(base, o, run.fetch ?? fetch, stop.signal);
  const progress = startingProgress(run.full);
  const report = () => run.onProgress?.({ ...progress, requests: http.requests });
  try {
    report();
    const { listed, load, list } = await readList(base, http, run, progress, report);
    const plan = planPass(listed, previous, list, run.full);
    if (run.full) await run.onListed?.([...plan.merged.values()], { report: list, kept: plan.kept });

    progress.phase = "details";
    progress.versions.of = plan.toRead.length;
    report();
    const partials = partialLanding(run, o.landEveryMs, () => [...plan.merged.values()]);
    const bulk = plan.toRead.length >= o.bulkVersionsFrom ? await readBulkVersions(base, http, o, run) : undefined;
    const reportAndLand = () => {
      report();
      partials.offer();
    };
    const errors = await readAllDetails(http, plan.toRead, plan.prevById, plan.merged, progress, reportAndLand, o.detailConcurrency, bulk);
    await partials.settled();
    // "done" is the caller's to report, once it has landed the result.
    progress.phase = "done";
    return {
      records: [...plan.merged.values()],
      changed: plan.changed,
      load,
      list,
      kept: plan.kept,
      errors,
      progress: { ...progress, requests: http.requests },
    };
  } finally {
    run.signal?.removeEventListener("abort", onOuterAbort);
    stop.abort();
  }
}

function startingProgress(full: boolean): MirrorProgress {
  return {
    pass: full ? "full" : "incremental",
    phase: "listing",
    startedAt: new Date().toISOString(),
    packs: { read: 0, total: null },
    versions: { done: 0, of: 0 },
    classes: 0,
    errors: 0,
    requests: 0,
  };
}

/** The pack list: the whole of it on a full pass, else the packs updated after `since`. */
async function readList(base: string, http: RegistryHttp, run: MirrorPassRun, progress: MirrorProgress, report: () => void) {
  let list: PackListReport | undefined;
  const source = new RegistryApiSource(base, { since: run.full ? undefined : run.since, http });
  const { records: listed, progress: load } = await readAllRecords(source, {
    onBadRecord: run.onBadRecord,
    onWarning: run.onWarning,
    onListReport: (r) => (list = r),
    onProgress: (p) => {
      progress.packs.read = p.indexed;
      report();
    },
    signal: http.signal,
  });
  progress.packs.total = list?.total ?? null;
  return { listed, load, list: list! };
}

/** What a pass is to do once its list is read: the catalog so far, the packs to read details of, and whether anything changed. */
interface PassPlan {
  prevById: Map<string, StoredNode>;
  /** The listed packs with the details already known, and (incremental) every other pack of the previous catalog. */
  merged: Map<string, StoredNode>;
  kept: string[];
  toRead: StoredNode[];
  changed: boolean;
}

function planPass(
  listed: StoredNode[],
  previous: readonly StoredNode[] | undefined,
  list: PackListReport | undefined,
  full: boolean,
): PassPlan {
  const prevById = new Map((previous ?? []).map((r) => [r.id, r]));
  const merged = new Map(full ? [] : prevById);
  for (const l of listed) merged.set(l.id, withDetails(l, detailsOf(prevById.get(l.id))));
  const kept: string[] = [];
  if (full && (list?.missing ?? 0) > 0) {
    for (const p of previous ?? []) {
      if (merged.has(p.id)) continue;
      merged.set(p.id, p);
      kept.push(p.id);
    }
  }
  const readable = (r: StoredNode) => r.status !== "NodeStatusBanned";
  const listedIds = new Set(listed.map((l) => l.id));
  // Incremental: the listed packs whose newest version moved, and any still waiting for details.
  const toRead = full
    ? listed.filter(readable)
    : [
        ...listed.filter((l) => readable(l) && detailsStale(l, prevById.get(l.id))),
        ...[...merged.values()].filter((r) => readable(r) && !listedIds.has(r.id) && !r.versions),
      ];
  // Recently changed packs come back on every pass (`since` has a margin): only a difference counts.
  const changed = full || toRead.length > 0 || listed.some((l) => JSON.stringify(merged.get(l.id)) !== JSON.stringify(prevById.get(l.id)));
  return { prevById, merged, kept, toRead, changed };
}

/** The registry's list of every version, when it can be read; otherwise each pack's versions are asked for one by one. */
async function readBulkVersions(
  base: string,
  http: RegistryHttp,
  o: Required<MirrorOptions>,
  run: MirrorPassRun,
): Promise<AllVersions | undefined> {
  const bulk = await readAllVersions(http, o.detailConcurrency, o.rereads).catch((err: unknown) => {
    if (http.signal.aborted) throw err;
    run.onWarning?.(`${base}/versions: ${describe(err)}; every pack's versions are asked for one by one`);
    return undefined;
  });
  if (bulk && !bulk.complete)
    run.onWarning?.(
      `${base}/versions: ${bulk.distinct} distinct versions of ${bulk.total}; every pack's versions are asked for one by one`,
    );
  return bulk;
}

/** `run.onPartial` with the catalog so far, at most every `everyMs` and one landing at a time. */
function partialLanding(
  run: MirrorPassRun,
  everyMs: number,
  catalogSoFar: () => StoredNode[],
): { offer(): void; settled(): Promise<void> } {
  let lastLanded = Date.now();
  let landing: Promise<void> | undefined;
  return {
    offer() {
      if (!run.onPartial || landing || Date.now() - lastLanded < everyMs) return;
      landing = run.onPartial(catalogSoFar()).finally(() => {
        lastLanded = Date.now();
        landing = undefined;
      });
    },
    settled: async () => landing,
  };
}

/** Every pack's details, `concurrency` at a time; stops early when the registry fails many packs in a row. */
async function readAllDetails(
  http: RegistryHttp,
  packs: StoredNode[],
  prevById: Map<string, StoredNode>,
  into: Map<string, StoredNode>,
  progress: MirrorProgress,
  report: () => void,
  concurrency: number,
  bulk: AllVersions | undefined,
): Promise<string[]> {
  const errors: string[] = [];
  let next = 0;
  let failedInARow = 0;
  const giveUpAfter = Math.max(10, 3 * concurrency);
  const worker = async () => {
    while (next < packs.length && failedInARow < giveUpAfter) {
      const pack = packs[next++]!;
      const prev = prevById.get(pack.id);
      try {
        const d = await readPackDetails(
          http,
          pack.id,
          { version: prev?.app_node_names_version, classes: prev?.app_node_names, definitions: prev?.app_nodes },
          listedVersions(bulk, pack),
        );
        if (d) into.set(pack.id, withDetails(withoutDetails(pack), d));
        progress.versions.done++;
        if (into.get(pack.id)?.app_node_names_version !== undefined) progress.classes++;
        failedInARow = 0;
      } catch (err) {
        if (http.signal.aborted) throw err;
        errors.push(`${pack.id}: ${describe(err)}`);
        progress.errors++;
        failedInARow++;
      }
      report();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, packs.length) }, worker));
  if (failedInARow >= giveUpAfter)
    errors.push(`gave up after ${failedInARow} packs failed in a row; ${packs.length - next} not asked this pass`);
  return errors;
}

/**
 * A pack's versions from the list of every version, when they can be trusted: the read was
 * complete and holds the version the pack list names as the pack's newest. Otherwise (a pack
 * published meanwhile, a short read) the pack's own versions are asked for.
 */
function listedVersions(bulk: AllVersions | undefined, pack: StoredNode): NodeVersion[] | undefined {
  if (!bulk?.complete) return undefined;
  const versions = bulk.byPack.get(pack.id);
  const newest = pack.latest_version?.version;
  return versions && newest !== undefined && versions.some((v) => v.version === newest) ? versions : undefined;
}
