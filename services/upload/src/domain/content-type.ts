/**
 * What a browser may do with stored content. Asset content is whatever a client uploaded, so
 * types a browser would run as a document (HTML, SVG, XML dialects, script) are always sent as
 * `application/octet-stream` with `Content-Disposition: attachment`, whatever `disposition` the
 * client asked for: they never render in this service's origin.
 */
const DANGEROUS =
  /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|text\/javascript|application\/javascript|application\/ecmascript|text\/ecmascript|text\/xsl)$|\+xml$/;

/** The bare `type/subtype`, lower-cased (a declared type may carry parameters). */
export function bareMime(mime: string): string {
  return (mime.split(";", 1)[0] ?? "").trim().toLowerCase() || "application/octet-stream";
}

export function isDangerousType(mime: string): boolean {
  return DANGEROUS.test(bareMime(mime));
}

/** Content a client can show as a preview (image, video, audio, text); model weights and other bytes have none of their own. */
export function isPreviewable(mime: string): boolean {
  return /^(image|video|audio|text)\//.test(bareMime(mime));
}
