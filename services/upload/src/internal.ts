// The parts benches and other packages' tests reach below the service (`@app/upload/internal`); not for the processes that host upload.
export { FsBlobStore } from "@app/blobs";
export { createReferenceStore } from "./compose.ts";
export { digestKey, loadApiKeys, parseKeyFile } from "./adapters/keys/api-keys.ts";
export type { ReferenceStore } from "./adapters/references/reference-store.ts";
export { createSqliteReferenceStore } from "./adapters/references/sqlite-reference-store.ts";
export { metadataConditions, presentEntry, valueEntry } from "./domain/metadata-index.ts";
