import { existsSync } from "node:fs";
import { join } from "node:path";
import type { IContainer, IPodSpec } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import {
  commandVars,
  containerEnv,
  kustomizeBuild,
  listedObjects,
  name,
  podSpecOf,
  quantity,
  readKustomization,
  selectorMatches,
  toManifests,
  yamlFilesIn,
  type Manifests,
} from "./k8s.ts";
import { parseKeyFile } from "@app/upload/internal";
import { commandOnPath, compiledFile, configKeys, repoRoot, scriptFile, services, validateEnv } from "./support.ts";

const hasKubectl = commandOnPath("kubectl");
if (!hasKubectl) console.log("[deploy] kubectl not on PATH: skipping the checks of `kubectl kustomize` output");

const kustomizeDirs = ["deploy/base", "deploy/overlays/example"];

const sets: { label: string; rendered: boolean; load: () => Manifests }[] = [
  { label: "deploy/base as written", rendered: false, load: () => toManifests(listedObjects("deploy/base"), "deploy/base") },
  ...(hasKubectl
    ? kustomizeDirs.map((dir) => ({
        label: `kubectl kustomize ${dir}`,
        rendered: true,
        load: () => toManifests(kustomizeBuild(dir), `kustomize ${dir}`),
      }))
    : []),
];

/** Every pod template in the set, with where it comes from. */
function pods(m: Manifests): { owner: string; spec: IPodSpec; labels: Record<string, string>; claims?: string[] }[] {
  return [
    ...m.deployments.map((d) => ({ owner: `Deployment ${name(d)}`, spec: podSpecOf(d), labels: d.spec!.template.metadata?.labels ?? {} })),
    ...m.statefulSets.map((s) => ({
      owner: `StatefulSet ${name(s)}`,
      spec: podSpecOf(s),
      labels: s.spec!.template.metadata?.labels ?? {},
      claims: (s.spec!.volumeClaimTemplates ?? []).map(name),
    })),
    ...m.jobs.map((j) => ({ owner: `Job ${name(j)}`, spec: podSpecOf(j), labels: j.spec!.template.metadata?.labels ?? {} })),
    ...m.cronJobs.map((c) => ({
      owner: `CronJob ${name(c)}`,
      spec: c.spec!.jobTemplate.spec!.template.spec!,
      labels: c.spec!.jobTemplate.spec!.template.metadata?.labels ?? {},
    })),
  ];
}

function declaresPort(containers: IContainer[], port: string | number | undefined): boolean {
  return containers.some((c) => (c.ports ?? []).some((p) => p.containerPort === port || (p.name !== undefined && p.name === port)));
}

describe.each(kustomizeDirs)("%s/kustomization.yaml", (dir) => {
  it("lists every YAML file of its directory (as a resource or a patch), and only files that exist", () => {
    const k = readKustomization(dir);
    const listedFiles = [...k.resources.filter((r) => /\.ya?ml$/.test(r)), ...k.patches].sort();
    expect(listedFiles).toEqual(yamlFilesIn(dir));
    for (const r of [...k.resources, ...k.components, ...k.patches]) expect(existsSync(join(repoRoot, dir, r)), `${dir}: ${r}`).toBe(true);
  });
});

describe.each(sets)("$label", ({ load, rendered }) => {
  // Loaded once; a load failure (bad YAML, a schema violation, kustomize refusing) fails the
  // first test with its message instead of aborting the whole file.
  let loaded: Manifests | undefined;
  let loadError: unknown;
  try {
    loaded = load();
  } catch (err) {
    loadError = err;
  }
  const m = new Proxy({} as Manifests, {
    get: (_t, key) => {
      if (!loaded) throw loadError;
      return loaded[key as keyof Manifests];
    },
  });

  it("loads, and every object passes the Kubernetes schema (kubernetes-models)", () => {
    if (!loaded) throw loadError;
    expect(m.count).toBeGreaterThan(10);
  });

  it("has a Deployment, a Service and a HorizontalPodAutoscaler for each of the four services", () => {
    for (const s of services) {
      expect(m.deployments.map(name), s.name).toContain(s.name);
      expect(m.services.map(name), s.name).toContain(s.name);
      expect(
        m.hpas.map((h) => h.spec?.scaleTargetRef.name),
        s.name,
      ).toContain(s.name);
    }
  });

  it("probes every Deployment's readiness on /readyz and liveness on /healthz, on a port it declares", () => {
    for (const d of m.deployments) {
      const containers = podSpecOf(d).containers;
      for (const c of containers) {
        const where = `Deployment ${name(d)} container ${c.name}`;
        expect(c.readinessProbe?.httpGet?.path, where).toBe("/readyz");
        expect(c.livenessProbe?.httpGet?.path, where).toBe("/healthz");
        expect(declaresPort(containers, c.readinessProbe?.httpGet?.port), `${where} readiness port`).toBe(true);
        expect(declaresPort(containers, c.livenessProbe?.httpGet?.port), `${where} liveness port`).toBe(true);
      }
    }
  });

  it("gives every container CPU and memory requests and limits, requests not above limits", () => {
    for (const p of pods(m)) {
      for (const c of [...(p.spec.initContainers ?? []), ...p.spec.containers]) {
        const where = `${p.owner} container ${c.name}`;
        for (const r of ["cpu", "memory"]) {
          const req = c.resources?.requests?.[r];
          const lim = c.resources?.limits?.[r];
          expect(req, `${where} requests.${r}`).toBeDefined();
          expect(lim, `${where} limits.${r}`).toBeDefined();
          expect(quantity(req!), `${where} ${r}`).toBeLessThanOrEqual(quantity(lim!));
        }
      }
    }
  });

  it("runs every pod as a non-root user without privilege escalation", () => {
    for (const p of pods(m)) {
      expect(p.spec.securityContext?.runAsNonRoot, p.owner).toBe(true);
      expect(p.spec.securityContext?.runAsUser ?? 0, p.owner).toBeGreaterThan(0);
      for (const c of [...(p.spec.initContainers ?? []), ...p.spec.containers]) {
        expect(c.securityContext?.allowPrivilegeEscalation, `${p.owner} ${c.name}`).toBe(false);
        expect(c.securityContext?.runAsUser ?? 1, `${p.owner} ${c.name}`).toBeGreaterThan(0);
      }
    }
  });

  it("selects each workload's own pods", () => {
    for (const w of [...m.deployments, ...m.statefulSets]) {
      expect(selectorMatches(w.spec!.selector.matchLabels ?? {}, w.spec!.template.metadata?.labels), `${w.kind} ${name(w)}`).toBe(true);
    }
  });

  it("points every HPA at an existing Deployment that has CPU requests and leaves its replica count to the HPA", () => {
    expect(m.hpas.length).toBeGreaterThanOrEqual(4);
    for (const h of m.hpas) {
      const ref = h.spec!.scaleTargetRef;
      expect(ref.kind, name(h)).toBe("Deployment");
      expect(ref.apiVersion, name(h)).toBe("apps/v1");
      const target = m.deployments.find((d) => name(d) === ref.name);
      expect(target, `HPA ${name(h)} → Deployment ${ref.name}`).toBeDefined();
      expect(target!.spec!.replicas, `Deployment ${ref.name} sets replicas, which every apply would reset`).toBeUndefined();
      expect(h.spec!.minReplicas ?? 1).toBeLessThanOrEqual(h.spec!.maxReplicas);
      const scalesOnCpu = (h.spec!.metrics ?? []).some((x) => x.type === "Resource" && x.resource?.name === "cpu");
      if (scalesOnCpu) {
        for (const c of podSpecOf(target!).containers) expect(c.resources?.requests?.cpu, `${ref.name} ${c.name}`).toBeDefined();
      }
    }
  });

  it("makes every Service select the pods of exactly one workload and target a port they declare", () => {
    const workloads = [...m.deployments, ...m.statefulSets];
    for (const s of m.services) {
      const selector = s.spec?.selector ?? {};
      const matched = workloads.filter((w) => selectorMatches(selector, w.spec!.template.metadata?.labels));
      expect(matched.map(name), `Service ${name(s)}`).toHaveLength(1);
      const containers = podSpecOf(matched[0]!).containers;
      for (const p of s.spec?.ports ?? []) {
        expect(declaresPort(containers, p.targetPort ?? p.port), `Service ${name(s)} port ${p.port}`).toBe(true);
      }
    }
  });

  it("makes every PodDisruptionBudget select an existing workload", () => {
    for (const pdb of m.pdbs) {
      const selector = pdb.spec?.selector?.matchLabels ?? {};
      const matched = [...m.deployments, ...m.statefulSets].filter((w) => selectorMatches(selector, w.spec!.template.metadata?.labels));
      expect(matched.length, `PDB ${name(pdb)}`).toBe(1);
    }
  });

  it("gives every app container an environment whose references resolve and that the stack's config accepts", () => {
    const appImage = /comfy-registry-assets\//;
    let checked = 0;
    for (const p of pods(m)) {
      for (const c of p.spec.containers.filter((x) => appImage.test(x.image ?? ""))) {
        const where = `${p.owner} container ${c.name}`;
        const env = containerEnv(c, m);
        for (const key of Object.keys(env)) expect(configKeys.has(key), `${where}: ${key} is not a variable of config.ts`).toBe(true);
        expect(() => validateEnv(env), where).not.toThrow();
        for (const v of commandVars([...(c.command ?? []), ...(c.args ?? [])])) expect(env[v], `${where}: $(${v})`).toBeDefined();
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });

  it("mounts only volumes the pod defines, and Secrets and ConfigMaps that exist", () => {
    for (const p of pods(m)) {
      for (const v of p.spec.volumes ?? []) {
        if (v.secret) expect(m.secrets.map(name), `${p.owner} volume ${v.name}`).toContain(v.secret.secretName);
        if (v.configMap) expect(m.configMaps.map(name), `${p.owner} volume ${v.name}`).toContain(v.configMap.name);
      }
      for (const c of p.spec.containers) {
        const mounts = new Set((c.volumeMounts ?? []).map((vm) => vm.name));
        const volumes = [...(p.spec.volumes ?? []).map((v) => v.name), ...(p.claims ?? [])];
        for (const vm of mounts) expect(volumes, `${p.owner} ${c.name}`).toContain(vm);
      }
    }
  });

  it("wires the gateway to the search and upload Services on the ports they serve", () => {
    const gw = m.deployments.find((d) => name(d) === "gateway")!;
    const env = containerEnv(podSpecOf(gw).containers[0]!, m);
    for (const [key, svc] of [
      ["SEARCH_URL", "search"],
      ["UPLOAD_URL", "upload"],
    ] as const) {
      const url = new URL(env[key]!);
      const service = m.services.find((s) => name(s) === svc)!;
      expect(url.hostname, key).toBe(svc);
      expect(
        (service.spec?.ports ?? []).map((p) => String(p.port)),
        key,
      ).toContain(url.port);
    }
  });

  it("points URLs at in-set Services only on ports those Services expose", () => {
    for (const p of pods(m)) {
      for (const c of p.spec.containers.filter((x) => /comfy-registry-assets\//.test(x.image ?? ""))) {
        for (const [key, value] of Object.entries(containerEnv(c, m))) {
          if (!/^[a-z]+:\/\//.test(value)) continue;
          const url = new URL(value);
          const service = m.services.find((s) => name(s) === url.hostname);
          if (!service) continue; // an external endpoint (set by an overlay)
          expect(
            (service.spec?.ports ?? []).map((x) => String(x.port)),
            `${p.owner} ${key}=${value}`,
          ).toContain(url.port);
        }
      }
    }
  });

  it("runs the reindex Job and CronJob with the search package's reindex script and a --source", () => {
    const script = scriptFile("search", "reindex");
    const runs = [
      ...m.jobs.filter((j) => name(j).startsWith("reindex")).map((j) => podSpecOf(j)),
      ...m.cronJobs.filter((c) => name(c).startsWith("reindex")).map((c) => c.spec!.jobTemplate.spec!.template.spec!),
    ];
    expect(runs).toHaveLength(2);
    for (const spec of runs) {
      const c = spec.containers[0]!;
      expect(c.image).toMatch(/comfy-registry-assets\/search(:|$)/);
      expect(c.command?.slice(0, 2)).toEqual(["node", compiledFile(script)]);
      expect(c.command).toContain("--source");
      expect(spec.restartPolicy).toMatch(/^(Never|OnFailure)$/);
    }
    for (const c of m.cronJobs) expect(c.spec!.concurrencyPolicy, name(c)).toBe("Forbid");
  });

  it("leaves the four services' containers to the image's CMD", () => {
    for (const s of services) {
      const d = m.deployments.find((x) => name(x) === s.name)!;
      const c = podSpecOf(d).containers[0]!;
      expect(c.command, s.name).toBeUndefined();
      expect(c.args, s.name).toBeUndefined();
      expect(c.image, s.name).toMatch(new RegExp(`comfy-registry-assets/${s.name}(:|$)`));
      expect(c.ports?.[0]?.containerPort, s.name).toBe(s.port);
      expect(containerEnv(c, m).PORT, s.name).toBe(String(s.port));
    }
  });

  it("mounts the API key Secret where the upload service's API_KEYS_FILE points, in the format it reads", () => {
    const upload = m.deployments.find((d) => name(d) === "upload")!;
    const spec = podSpecOf(upload);
    const c = spec.containers[0]!;
    const file = containerEnv(c, m).API_KEYS_FILE!;
    expect(file).toBeTruthy();
    const mount = (c.volumeMounts ?? []).find((vm) => file.startsWith(`${vm.mountPath}/`));
    expect(mount, `a volume mounted above ${file}`).toBeDefined();
    const volume = (spec.volumes ?? []).find((v) => v.name === mount!.name);
    const secret = m.secrets.find((s) => name(s) === volume?.secret?.secretName);
    const key = file.slice(mount!.mountPath.length + 1);
    const text = secret?.stringData?.[key] ?? Buffer.from(secret?.data?.[key] ?? "", "base64").toString("utf8");
    expect(text, `Secret ${volume?.secret?.secretName} key ${key}`).toBeTruthy();
    // The placeholder parses with the service's own reader (so it boots) and grants nothing.
    expect(parseKeyFile(text, "comfy-api-keys")).toEqual([]);
  });

  it("holds only placeholder secrets (no real credential committed)", () => {
    for (const s of m.secrets) {
      const values = { ...(s.stringData ?? {}) };
      for (const [k, v] of Object.entries(s.data ?? {})) values[k] = Buffer.from(v, "base64").toString("utf8");
      expect(Object.keys(values).length, name(s)).toBeGreaterThan(0);
      for (const [k, v] of Object.entries(values)) expect(v, `Secret ${name(s)} key ${k}`).toMatch(/REPLACE_ME/);
    }
  });

  // Only kustomize output has the images: transformer applied.
  if (rendered)
    it("pins every image to an explicit tag", () => {
      for (const p of pods(m)) {
        for (const c of [...(p.spec.initContainers ?? []), ...p.spec.containers]) {
          expect(c.image, `${p.owner} ${c.name}`).toMatch(/:[\w][\w.-]*$/);
          expect(c.image, `${p.owner} ${c.name}`).not.toMatch(/:latest$/);
        }
      }
    });
});
