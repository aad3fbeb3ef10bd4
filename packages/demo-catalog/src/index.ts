export { FIXTURE_NODES, FIXTURE_SEED, generateCatalog, seeded, type GeneratedNode } from "./generated-catalog.ts";
export { archiveBytes, archiveReprDigest } from "./archives.ts";
export { DEMO_NODES, DEMO_UPSTREAM, demoCatalog, demoVersions, type DemoVersion } from "./demo.ts";
