// The archives are made by a runtime package (CATALOG_SOURCE=demo serves them too).
export { archiveBytes, archiveReprDigest } from "@app/demo-catalog";
