import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const rootEngines: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node;
type Locked = { engines?: { node?: string }; os?: string[]; cpu?: string[] };
const lock = parse(readFileSync(join(root, "pnpm-lock.yaml"), "utf8")) as { packages: Record<string, Locked> };

/** pnpm installs (and checks the engines of) a package built for one platform only on that platform. */
const installedHere = (p: Locked) =>
  (p.os === undefined || p.os.includes(process.platform)) && (p.cpu === undefined || p.cpu.includes(process.arch));

/** The oldest release of each line the root `engines` admits (`^20.19.0 || >=22.13.0` → 20.19.0, 22.13.0). */
const floors = new semver.Range(rootEngines).set.map(
  (alternative) => semver.minVersion(alternative.map((c) => c.value).join(" "))!.version,
);

// `pnpm install` warns about any locked package whose `engines.node` the running Node misses:
// the README, the root `engines` and the lockfile must name the same Node.
describe("the Node version the project names", () => {
  it("is what the README tells a newcomer to install", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const named = /[Ww]ith Node (\d+\.\d+)\+ or (\d+\.\d+)\+/.exec(readme);
    expect(named, "README names its Node versions").not.toBeNull();
    expect(floors.map((v) => v.replace(/\.0$/, ""))).toEqual([named![1], named![2]]);
  });

  it("is admitted by the engines.node of every locked package this platform installs", () => {
    const refused = Object.entries(lock.packages).flatMap(([name, p]) =>
      p.engines?.node === undefined || !installedHere(p)
        ? []
        : floors.filter((v) => !semver.satisfies(v, p.engines!.node!)).map((v) => `${name} wants ${p.engines!.node} (not ${v})`),
    );
    expect(refused).toEqual([]);
  });
});
