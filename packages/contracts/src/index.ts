export * from "./registry.ts";
export * from "./registry-reads.ts";
export * from "./search-query.ts";
export * from "./upload.ts";
export * from "./assets.ts";
export * from "./jobs.ts";
export * from "./forms.ts";
export * from "./openapi.ts";
