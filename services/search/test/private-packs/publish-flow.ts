import type { RequestListener } from "node:http";
import request from "supertest";
import { expect } from "vitest";
import { zipOf } from "@app/testkit/zip-files";

export const asAlice = { "X-API-Key": "alice-key" };

/** The body `comfy node publish` sends (comfy_cli/registry/api.py), for a pack `nodeId` at `version`. */
export function publishBody(token: string, nodeId: string, version: string): Record<string, unknown> {
  return {
    personal_access_token: token,
    node: {
      id: nodeId,
      description: "A team's own nodes",
      icon: "",
      name: "Team Nodes",
      license: '{"file": "LICENSE"}',
      repository: "https://git.example.internal/team/nodes",
      banner_url: "",
      supported_os: [],
      supported_accelerators: [],
      supported_comfyui_version: "",
      supported_comfyui_frontend_version: "",
    },
    node_version: {
      version,
      dependencies: ["numpy"],
      supported_os: [],
      supported_accelerators: [],
      supported_comfyui_version: "",
      supported_comfyui_frontend_version: "",
    },
  };
}

export const NODE_FILE = `
class TeamBlur:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"image": ("IMAGE",)}}

NODE_CLASS_MAPPINGS = {
    "TeamBlur": TeamBlur,  # the blur
    'TeamSharpen': TeamBlur,
}
NODE_DISPLAY_NAME_MAPPINGS = {"TeamBlur": "Team Blur"}
`;

export const PACK_ZIP = zipOf([
  { name: "__init__.py", data: NODE_FILE, deflate: true },
  { name: "pyproject.toml", data: '[project]\nname = "team-nodes"\n' },
]);

/** A publisher `team-a` owned by alice, and a token for it. */
export async function publisherWithToken(app: RequestListener, id = "team-a"): Promise<string> {
  await request(app).post("/publishers").set(asAlice).send({ id }).expect(201);
  return (await request(app).post(`/publishers/${id}/tokens`).set(asAlice).send({ name: "ci" }).expect(201)).body.token;
}

/** The path and query of a signed URL, to send to the app under test. */
export function pathOf(signedUrl: string): string {
  const u = new URL(signedUrl);
  return u.pathname + u.search;
}

/** POST then PUT, as the client does; answers the PUT. */
export async function publish(
  app: RequestListener,
  token: string,
  nodeId: string,
  version: string,
  zip: Buffer = PACK_ZIP,
  publisherId = "team-a",
) {
  const started = await request(app)
    .post(`/publishers/${publisherId}/nodes/${nodeId}/versions`)
    .set("content-type", "application/json")
    .send(publishBody(token, nodeId, version));
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return request(app).put(pathOf(started.body.signedUrl)).set("content-type", "application/zip").send(zip);
}
