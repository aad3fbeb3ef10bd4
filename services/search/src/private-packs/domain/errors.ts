/**
 * A refusal of a private-pack route. `body` is what the client reads: registry-backend answers
 * its publish checks with `{message}`, and the registry's clients print that body as is.
 */
export class PrivatePackError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string = status === 404 ? "not_found" : status === 403 ? "forbidden" : "invalid_parameter",
  ) {
    super(message);
  }

  get body(): { error: string; message: string } {
    return { error: this.code, message: this.message };
  }
}
