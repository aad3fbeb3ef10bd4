import request from "supertest";

/** What supertest can send requests to: an Express app, a request listener, a server or a base URL. */
export type Target = Parameters<typeof request.agent>[0];

/**
 * The tests' one authorised client: a supertest agent that sends `key` as `X-API-Key` on every
 * request (`keyedClient(app, KEY).post("/api/assets")…`). A request without a key is still
 * `request(app)`.
 */
export function keyedClient(target: Target, key: string): ReturnType<typeof request.agent> {
  return request.agent(target).set("x-api-key", key);
}
