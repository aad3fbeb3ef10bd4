/**
 * A refusal of a private-pack route. The publisher routes answer the search service's
 * `{error, message}`; the publish routes (`code: "registry"`) answer registry-backend's
 * `{message, error?}`, which comfy-cli prints as is.
 */
export class PrivatePackError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string = status === 404 ? "not_found" : status === 403 ? "forbidden" : "invalid_parameter",
    readonly detail?: string,
  ) {
    super(message);
  }

  get body(): Record<string, string> {
    if (this.code === "registry") return this.detail ? { message: this.message, error: this.detail } : { message: this.message };
    return { error: this.code, message: this.message };
  }
}
