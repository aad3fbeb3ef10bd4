import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { CronJob, Job } from "kubernetes-models/batch/v1";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Namespace, PersistentVolumeClaim, Secret, Service } from "kubernetes-models/v1";
import type { IContainer, IPodSpec } from "kubernetes-models/v1";
import { parseAllDocuments } from "yaml";
import { isRecord, readYaml, readYamlDocs, repoRoot } from "./support.ts";

/** The kinds the manifests may use, each with its schema-validating model. */
const models = {
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "batch/v1/Job": Job,
  "batch/v1/CronJob": CronJob,
  "networking.k8s.io/v1/Ingress": Ingress,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "v1/ConfigMap": ConfigMap,
  "v1/Namespace": Namespace,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "v1/Secret": Secret,
  "v1/Service": Service,
} as const;

export interface Manifests {
  deployments: Deployment[];
  statefulSets: StatefulSet[];
  services: Service[];
  hpas: HorizontalPodAutoscaler[];
  pdbs: PodDisruptionBudget[];
  jobs: Job[];
  cronJobs: CronJob[];
  configMaps: ConfigMap[];
  secrets: Secret[];
  other: { kind: string; name: string }[];
  count: number;
}

/** Builds each object through its kubernetes-models class and validates it against the schema. */
export function toManifests(objects: unknown[], origin: string): Manifests {
  const m: Manifests = {
    deployments: [],
    statefulSets: [],
    services: [],
    hpas: [],
    pdbs: [],
    jobs: [],
    cronJobs: [],
    configMaps: [],
    secrets: [],
    other: [],
    count: objects.length,
  };
  for (const obj of objects) {
    if (!isRecord(obj)) throw new Error(`${origin}: a document is not a mapping`);
    const key = `${String(obj.apiVersion)}/${String(obj.kind)}` as keyof typeof models;
    const Model = models[key];
    const name = isRecord(obj.metadata) ? String(obj.metadata.name) : "?";
    if (!Model) throw new Error(`${origin}: ${key} ${name} has no model here; add it to deploy/test/k8s.ts`);
    const model = new Model(obj);
    try {
      model.validate();
    } catch (err) {
      throw new Error(`${origin}: ${key} ${name} is invalid: ${(err as Error).message}`, { cause: err });
    }
    if (model instanceof Deployment) m.deployments.push(model);
    else if (model instanceof StatefulSet) m.statefulSets.push(model);
    else if (model instanceof Service) m.services.push(model);
    else if (model instanceof HorizontalPodAutoscaler) m.hpas.push(model);
    else if (model instanceof PodDisruptionBudget) m.pdbs.push(model);
    else if (model instanceof Job) m.jobs.push(model);
    else if (model instanceof CronJob) m.cronJobs.push(model);
    else if (model instanceof ConfigMap) m.configMaps.push(model);
    else if (model instanceof Secret) m.secrets.push(model);
    else m.other.push({ kind: String(obj.kind), name });
  }
  return m;
}

export interface Kustomization {
  resources: string[];
  components: string[];
  /** Patch files (inline patches have no path). */
  patches: string[];
}

export function readKustomization(dir: string): Kustomization {
  const k = readYaml(join(repoRoot, dir, "kustomization.yaml"));
  if (!isRecord(k)) throw new Error(`${dir}/kustomization.yaml is not a mapping`);
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
  const patches = (Array.isArray(k.patches) ? k.patches : []).flatMap((p: unknown) =>
    isRecord(p) && typeof p.path === "string" ? [p.path] : [],
  );
  return { resources: list(k.resources), components: list(k.components), patches };
}

/** The YAML files of a kustomize directory other than kustomization.yaml itself. */
export function yamlFilesIn(dir: string): string[] {
  return readdirSync(join(repoRoot, dir))
    .filter((f) => /\.ya?ml$/.test(f) && f !== "kustomization.yaml")
    .sort();
}

/** The objects of the files a kustomization lists directly (not of the bases it pulls in). */
export function listedObjects(dir: string): unknown[] {
  return readKustomization(dir)
    .resources.filter((r) => /\.ya?ml$/.test(r))
    .flatMap((r) => readYamlDocs(join(repoRoot, dir, r)));
}

/** `kubectl kustomize <dir>`: what `kubectl apply -k` would send. */
export function kustomizeBuild(dir: string): unknown[] {
  const r = spawnSync("kubectl", ["kustomize", join(repoRoot, dir)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as unknown)
    .filter((v) => v !== null);
}

export function podSpecOf(w: Deployment | StatefulSet | Job): IPodSpec {
  const spec = w.spec?.template.spec;
  if (!spec) throw new Error(`${w.kind} ${w.metadata?.name}: no pod spec`);
  return spec;
}

export function name(o: { metadata?: { name?: string } }): string {
  return o.metadata?.name ?? "?";
}

/** CPU in millicores, memory in bytes, from a Kubernetes quantity. */
export function quantity(q: string | number): number {
  if (typeof q === "number") return q;
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`unreadable quantity ${q}`);
  const n = Number(m[1]);
  const unit = m[2] ?? "";
  const factor: Record<string, number> = {
    "": 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
  };
  return n * factor[unit]!;
}

/**
 * The environment a container starts with: envFrom ConfigMaps/Secrets, then env entries
 * (values or key references). A reference to a missing object or key throws, as the kubelet
 * would refuse to start the pod.
 */
export function containerEnv(c: IContainer, m: Manifests): Record<string, string> {
  const env: Record<string, string> = {};
  const cm = (n: string) => {
    const found = m.configMaps.find((x) => name(x) === n);
    if (!found) throw new Error(`container ${c.name}: ConfigMap ${n} does not exist`);
    return found.data ?? {};
  };
  const secret = (n: string) => {
    const found = m.secrets.find((x) => name(x) === n);
    if (!found) throw new Error(`container ${c.name}: Secret ${n} does not exist`);
    const decoded = Object.fromEntries(Object.entries(found.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
    return { ...decoded, ...(found.stringData ?? {}) };
  };
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, cm(from.configMapRef.name!));
    if (from.secretRef) Object.assign(env, secret(from.secretRef.name!));
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.configMapKeyRef) {
      const { name: n, key } = e.valueFrom.configMapKeyRef;
      const v = cm(n!)[key];
      if (v === undefined) throw new Error(`container ${c.name}: ConfigMap ${n} has no key ${key}`);
      env[e.name] = v;
    } else if (e.valueFrom?.secretKeyRef) {
      const { name: n, key } = e.valueFrom.secretKeyRef;
      const v = secret(n!)[key];
      if (v === undefined) throw new Error(`container ${c.name}: Secret ${n} has no key ${key}`);
      env[e.name] = v;
    } else throw new Error(`container ${c.name}: env ${e.name} has neither a value nor a supported reference`);
  }
  return env;
}

/** `$(VAR)` references in a command, which Kubernetes expands from the container's env. */
export function commandVars(cmd: string[]): string[] {
  return cmd.flatMap((part) => [...part.matchAll(/\$\(([A-Z0-9_]+)\)/g)].map((x) => x[1]!));
}

export function selectorMatches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  const entries = Object.entries(selector);
  return entries.length > 0 && entries.every(([k, v]) => labels?.[k] === v);
}
