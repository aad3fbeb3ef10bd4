"""Load the bundled openapi.yml and expose the curated image-endpoint registry.

Lookup order on disk:
1. ``~/.comfy/openapi-cache.yml`` if fresher than CACHE_TTL_DAYS
2. The vendored copy under ``comfy_cli/command/generate/spec/openapi.yml``

The parsed spec is cached in-process via functools.lru_cache so repeated lookups
inside a single CLI invocation don't re-parse the 30k-line YAML.
"""

from __future__ import annotations

import os
import re as _re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml


class _YamlLoader(yaml.SafeLoader):
    """SafeLoader that strips YAML 1.1's bool aliases for ``on``/``off``/
    ``yes``/``no``/``y``/``n``.

    The vendored openapi uses unquoted ``[on, off]`` and similar as **string**
    enum values (e.g. Kling's ``sound`` field), but PyYAML's default resolvers
    promote them to ``True``/``False`` — which then breaks our flag-rendering
    (`'|'.join` on a list with booleans) and the upstream API contract. Limit
    bool resolution to the YAML 1.2 spelling (``true``/``false`` only)."""


_YamlLoader.yaml_implicit_resolvers = {
    k: [(t, r) for (t, r) in resolvers if t != "tag:yaml.org,2002:bool"]
    for k, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    _re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
# PyYAML's YAML 1.1 float resolver only recognizes scientific notation when a
# decimal point is present (e.g. ``1.0e6``). The remote spec is served as JSON,
# and ``json.dumps`` emits exponent literals WITHOUT a point for very large/small
# floats (e.g. ``1e+16``, ``1e-07``); without this those numeric defaults/bounds
# would silently parse as strings and leak that way into flag schemas. Add a
# resolver for the point-less exponent form so JSON floats round-trip correctly.
_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    _re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)

PROXY_PREFIX = "/proxy/"
DEFAULT_BASE_URL = "https://api.comfy.org"
CACHE_TTL_SECONDS = 7 * 24 * 60 * 60

_BUNDLED_SPEC = Path(__file__).parent / "spec" / "openapi.yml"
_USER_CACHE = Path(os.path.expanduser("~/.comfy/openapi-cache.yml"))


@dataclass(frozen=True)
class Endpoint:
    """A single curated cloud API endpoint, resolved against the openapi spec."""

    id: str  # path with /proxy/ stripped, e.g. "openai/images/generations"
    path: str  # full openapi path, e.g. "/proxy/openai/images/generations"
    method: str  # "post" / "get"
    partner: str  # first path segment under /proxy/
    summary: str
    category: str  # "text-to-image", "image-edit", "upscale", "inpaint", ...
    request_schema: dict[str, Any]  # resolved (no $ref) request body schema
    request_content_type: str  # "application/json" | "multipart/form-data"
    response_schema: dict[str, Any]  # resolved 200 response schema
    polling: str | None  # "bfl" | "kling" | "luma" | "topaz" | None


# Short, creative-facing aliases mapping to the curated openapi paths below.
# Aliases are what end users actually type: `comfy generate flux-pro --prompt …`.
# The full openapi path remains accepted as an escape hatch.
_ALIASES: dict[str, str] = {
    # Flux / BFL
    "flux-pro": "bfl/flux-pro-1.1/generate",
    "flux-ultra": "bfl/flux-pro-1.1-ultra/generate",
    "flux-2": "bfl/flux-2-pro/generate",
    "flux-kontext": "bfl/flux-kontext-pro/generate",
    "flux-kontext-max": "bfl/flux-kontext-max/generate",
    "flux-fill": "bfl/flux-pro-1.0-fill/generate",
    "flux-expand": "bfl/flux-pro-1.0-expand/generate",
    "flux-canny": "bfl/flux-pro-1.0-canny/generate",
    "flux-depth": "bfl/flux-pro-1.0-depth/generate",
    # Ideogram
    "ideogram": "ideogram/ideogram-v3/generate",
    "ideogram-edit": "ideogram/ideogram-v3/edit",
    "ideogram-remix": "ideogram/ideogram-v3/remix",
    "ideogram-reframe": "ideogram/ideogram-v3/reframe",
    "ideogram-bg": "ideogram/ideogram-v3/replace-background",
    # Stability
    "stability-ultra": "stability/v2beta/stable-image/generate/ultra",
    "stability-sd3": "stability/v2beta/stable-image/generate/sd3",
    "stability-upscale": "stability/v2beta/stable-image/upscale/conservative",
    "stability-upscale-creative": "stability/v2beta/stable-image/upscale/creative",
    "stability-upscale-fast": "stability/v2beta/stable-image/upscale/fast",
    # Recraft
    "recraft": "recraft/image_generation",
    "recraft-vectorize": "recraft/images/vectorize",
    "recraft-upscale": "recraft/images/crispUpscale",
    "recraft-upscale-creative": "recraft/images/creativeUpscale",
    "recraft-rmbg": "recraft/images/removeBackground",
    "recraft-replace-bg": "recraft/images/replaceBackground",
    "recraft-i2i": "recraft/images/imageToImage",
    "recraft-inpaint": "recraft/images/inpaint",
    # OpenAI / DALL·E
    "dalle": "openai/images/generations",
    "dalle-edit": "openai/images/edits",
    # xAI / Grok
    "grok": "xai/v1/images/generations",
    "grok-edit": "xai/v1/images/edits",
    # Reve
    "reve": "reve/v1/image/create",
    "reve-edit": "reve/v1/image/edit",
    # Runway
    "runway": "runway/text_to_image",
    # Video — Kling
    "kling": "kling/v1/videos/text2video",
    "kling-i2v": "kling/v1/videos/image2video",
    "kling-extend": "kling/v1/videos/video-extend",
    "kling-lipsync": "kling/v1/videos/lip-sync",
    # Video — Luma Dream Machine
    "luma": "luma/generations",
    "luma-i2v": "luma/generations/image",
    # Video — MiniMax / Hailuo
    "hailuo": "minimax/video_generation",
    # Video — Runway Gen-3
    "runway-i2v": "runway/image_to_video",
    # Video — Moonvalley
    "moonvalley-t2v": "moonvalley/prompts/text-to-video",
    "moonvalley-i2v": "moonvalley/prompts/image-to-video",
    # Video — Pika
    "pika": "pika/generate/2.2/t2v",
    "pika-i2v": "pika/generate/2.2/i2v",
    # Video — Vidu
    "vidu": "vidu/text2video",
    "vidu-i2v": "vidu/img2video",
    "vidu-extend": "vidu/extend",
    # Video — xAI Grok
    "grok-video": "xai/v1/videos/generations",
    # Google Gemini Flash Image (nano-banana). The model variant lives in the
    # URL path; the adapter substitutes ``--model`` at send time.
    "nano-banana": "vertexai/gemini/{model}",
    # ByteDance Seedance (video).
    "seedance": "byteplus/api/v3/contents/generations/tasks",
}


# Used in the `list` table for endpoints whose openapi summary is empty or too
# generic to convey what the model is.
_SUMMARY_OVERRIDES: dict[str, str] = {
    "vertexai/gemini/{model}": (
        "Google Gemini Flash Image (nano-banana) — text-to-image and image edits "
        "from a prompt plus optional reference images."
    ),
    "byteplus/api/v3/contents/generations/tasks": (
        "ByteDance Seedance — text-to-video and image-to-video (3–12s clips, up to 1080p)."
    ),
}

_PREFERRED_ALIAS: dict[str, str] = {v: k for k, v in _ALIASES.items()}


def aliases() -> dict[str, str]:
    """Return a copy of the alias → endpoint-id map (used for `list`)."""
    return dict(_ALIASES)


def preferred_alias(endpoint_id: str) -> str | None:
    """Return the short alias for an endpoint id, if any."""
    return _PREFERRED_ALIAS.get(endpoint_id)


def resolve_alias(target: str) -> str:
    """Map a user-typed model name to the canonical endpoint id.
    Accepts an alias, an endpoint id, or the full /proxy/... path."""
    if target in _ALIASES:
        return _ALIASES[target]
    if target.startswith(PROXY_PREFIX):
        return target[len(PROXY_PREFIX) :]
    return target


# Curated endpoint allowlist. Tuples of (endpoint_id, category, polling).
# ``polling`` is the partner-key the poll registry uses (None = sync).
# Endpoint id is the openapi path with /proxy/ stripped.
_ENDPOINT_ALLOWLIST: list[tuple[str, str, str | None]] = [
    # OpenAI
    ("openai/images/generations", "text-to-image", None),
    ("openai/images/edits", "image-edit", None),
    # BFL / Flux — all async via polling_url
    ("bfl/flux-pro-1.1/generate", "text-to-image", "bfl"),
    ("bfl/flux-pro-1.1-ultra/generate", "text-to-image", "bfl"),
    ("bfl/flux-kontext-pro/generate", "image-edit", "bfl"),
    ("bfl/flux-kontext-max/generate", "image-edit", "bfl"),
    ("bfl/flux-2-pro/generate", "text-to-image", "bfl"),
    ("bfl/flux-pro-1.0-fill/generate", "inpaint", "bfl"),
    ("bfl/flux-pro-1.0-expand/generate", "outpaint", "bfl"),
    ("bfl/flux-pro-1.0-canny/generate", "controlnet", "bfl"),
    ("bfl/flux-pro-1.0-depth/generate", "controlnet", "bfl"),
    # Ideogram
    ("ideogram/ideogram-v3/generate", "text-to-image", None),
    ("ideogram/ideogram-v3/edit", "image-edit", None),
    ("ideogram/ideogram-v3/remix", "image-edit", None),
    ("ideogram/ideogram-v3/reframe", "image-edit", None),
    ("ideogram/ideogram-v3/replace-background", "image-edit", None),
    # Stability
    ("stability/v2beta/stable-image/generate/ultra", "text-to-image", None),
    ("stability/v2beta/stable-image/generate/sd3", "text-to-image", None),
    ("stability/v2beta/stable-image/upscale/conservative", "upscale", None),
    ("stability/v2beta/stable-image/upscale/creative", "upscale", None),
    ("stability/v2beta/stable-image/upscale/fast", "upscale", None),
    # Recraft
    ("recraft/image_generation", "text-to-image", None),
    ("recraft/images/vectorize", "vectorize", None),
    ("recraft/images/crispUpscale", "upscale", None),
    ("recraft/images/removeBackground", "background", None),
    ("recraft/images/imageToImage", "image-to-image", None),
    ("recraft/images/inpaint", "inpaint", None),
    ("recraft/images/replaceBackground", "background", None),
    ("recraft/images/creativeUpscale", "upscale", None),
    # xAI
    ("xai/v1/images/generations", "text-to-image", None),
    ("xai/v1/images/edits", "image-edit", None),
    # Reve
    ("reve/v1/image/create", "text-to-image", None),
    ("reve/v1/image/edit", "image-edit", None),
    # Runway (image)
    ("runway/text_to_image", "text-to-image", None),
    # Video — Kling
    ("kling/v1/videos/text2video", "text-to-video", "kling"),
    ("kling/v1/videos/image2video", "image-to-video", "kling"),
    ("kling/v1/videos/video-extend", "video-extend", "kling"),
    ("kling/v1/videos/lip-sync", "lipsync", "kling"),
    # Video — Luma
    ("luma/generations", "text-to-video", "luma"),
    ("luma/generations/image", "image-to-video", "luma"),
    # Video — MiniMax / Hailuo
    ("minimax/video_generation", "text-to-video", "minimax"),
    # Video — Runway
    ("runway/image_to_video", "image-to-video", "runway"),
    # Video — Moonvalley
    ("moonvalley/prompts/text-to-video", "text-to-video", "moonvalley"),
    ("moonvalley/prompts/image-to-video", "image-to-video", "moonvalley"),
    # Video — Pika
    ("pika/generate/2.2/t2v", "text-to-video", "pika"),
    ("pika/generate/2.2/i2v", "image-to-video", "pika"),
    # Video — Vidu
    ("vidu/text2video", "text-to-video", "vidu"),
    ("vidu/img2video", "image-to-video", "vidu"),
    ("vidu/extend", "video-extend", "vidu"),
    # Video — xAI Grok
    ("xai/v1/videos/generations", "text-to-video", "xai_video"),
    # Google Gemini Flash Image (nano-banana). Sync; adapter decodes inline data.
    ("vertexai/gemini/{model}", "image-edit", None),
    # ByteDance Seedance (video) — async, custom poller.
    ("byteplus/api/v3/contents/generations/tasks", "text-to-video", "seedance"),
]


class SpecError(RuntimeError):
    pass


def _select_spec_path() -> Path:
    if _USER_CACHE.is_file():
        age = time.time() - _USER_CACHE.stat().st_mtime
        if age < CACHE_TTL_SECONDS:
            return _USER_CACHE
    if not _BUNDLED_SPEC.is_file():
        raise SpecError(f"openapi.yml not found at {_BUNDLED_SPEC}")
    return _BUNDLED_SPEC


@lru_cache(maxsize=1)
def load_raw_spec() -> dict[str, Any]:
    path = _select_spec_path()
    with path.open("r", encoding="utf-8") as f:
        return yaml.load(f, Loader=_YamlLoader)


def base_url() -> str:
    override = os.environ.get("COMFY_API_BASE_URL")
    if override:
        return override.rstrip("/")
    spec = load_raw_spec()
    servers = spec.get("servers") or [{"url": DEFAULT_BASE_URL}]
    return str(servers[0]["url"]).rstrip("/")


def _resolve_ref(spec: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise SpecError(f"Only local $refs are supported: {ref}")
    parts = ref[2:].split("/")
    node: Any = spec
    for p in parts:
        node = node[p]
    return node


def _resolve(spec: dict[str, Any], node: Any, seen: frozenset[str] = frozenset()) -> Any:
    """Recursively inline $refs in a schema. Cycles are broken with a placeholder."""
    if isinstance(node, dict):
        if "$ref" in node:
            ref = node["$ref"]
            if ref in seen:
                return {"type": "object", "x-recursive-ref": ref}
            resolved = _resolve_ref(spec, ref)
            return _resolve(spec, resolved, seen | {ref})
        return {k: _resolve(spec, v, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(spec, item, seen) for item in node]
    return node


def _detect_polling(partner: str, response_schema: dict[str, Any]) -> str | None:
    """Heuristic: classify async polling style by partner + response shape."""
    props = response_schema.get("properties", {}) if isinstance(response_schema, dict) else {}
    if partner == "bfl" and "polling_url" in props:
        return "bfl"
    if partner == "kling" and "data" in props:
        return "kling"
    if partner == "luma" and ("state" in props or "id" in props):
        return "luma"
    if partner == "topaz" and "process_id" in props:
        return "topaz"
    return None


@lru_cache(maxsize=1)
def _registry() -> dict[str, Endpoint]:
    spec = load_raw_spec()
    paths = spec.get("paths") or {}
    registry: dict[str, Endpoint] = {}
    for endpoint_id, category, polling_hint in _ENDPOINT_ALLOWLIST:
        path = PROXY_PREFIX + endpoint_id
        node = paths.get(path)
        if not node:
            continue  # spec drift — skip silently, surfaced via `comfy generate list`
        # All image endpoints are POST; pick the first defined method anyway.
        method = "post" if "post" in node else next(iter(node.keys()))
        op = node[method]
        partner = endpoint_id.split("/", 1)[0]

        req_body = op.get("requestBody") or {}
        content = req_body.get("content") or {}
        if "application/json" in content:
            ctype = "application/json"
        elif "multipart/form-data" in content:
            ctype = "multipart/form-data"
        else:
            ctype = next(iter(content.keys()), "application/json")
        req_schema = _resolve(spec, (content.get(ctype) or {}).get("schema") or {})

        # 200 response
        resp = (op.get("responses") or {}).get("200") or {}
        resp_content = resp.get("content") or {}
        resp_ctype = "application/json" if "application/json" in resp_content else next(iter(resp_content), "")
        resp_schema = _resolve(spec, (resp_content.get(resp_ctype) or {}).get("schema") or {}) if resp_ctype else {}

        polling = polling_hint or _detect_polling(partner, resp_schema)

        registry[endpoint_id] = Endpoint(
            id=endpoint_id,
            path=path,
            method=method,
            partner=partner,
            summary=_SUMMARY_OVERRIDES.get(endpoint_id)
            or str(op.get("summary") or op.get("description") or "").strip(),
            category=category,
            request_schema=req_schema if isinstance(req_schema, dict) else {},
            request_content_type=ctype,
            response_schema=resp_schema if isinstance(resp_schema, dict) else {},
            polling=polling,
        )
    return registry


def list_endpoints(
    partner: str | None = None,
    category: str | None = None,
    query: str | None = None,
) -> list[Endpoint]:
    out = list(_registry().values())
    if partner:
        out = [e for e in out if e.partner == partner.lower()]
    if category:
        out = [e for e in out if e.category == category]
    if query:
        q = query.lower()
        out = [e for e in out if q in e.id.lower() or q in e.summary.lower()]
    out.sort(key=lambda e: (e.partner, e.id))
    return out


def get_endpoint(endpoint_id: str) -> Endpoint:
    reg = _registry()
    canonical = resolve_alias(endpoint_id)
    if canonical in reg:
        return reg[canonical]
    raise SpecError(_unknown_endpoint_message(endpoint_id))


def _extract_enum(prop: dict[str, Any]) -> list[str] | None:
    """Pull a string enum out of a resolved property schema — directly, from
    ``items`` (array-typed fields), or from ``anyOf``/``oneOf``/``allOf``
    variants. ``anyOf``/``oneOf`` branches are unioned (a spec may split the
    model set across variants) while ``allOf`` branches are intersected (every
    constraint must hold). Numeric members are coerced to their string form so
    an unquoted YAML value like ``3.5`` isn't silently dropped. Returns None
    when no non-empty string enum is found."""
    enum = prop.get("enum")
    if isinstance(enum, list):
        values = [str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for v in enum]
        values = [v for v in values if isinstance(v, str)]
        if values:
            return values
    items = prop.get("items")
    if isinstance(items, dict):
        found = _extract_enum(items)
        if found:
            return found
    for key in ("anyOf", "oneOf"):
        variants = prop.get(key)
        if not isinstance(variants, list):
            continue
        merged: list[str] = []
        for variant in variants:
            if isinstance(variant, dict):
                found = _extract_enum(variant)
                if found:
                    merged.extend(v for v in found if v not in merged)
        if merged:
            return merged
    all_of = prop.get("allOf")
    if isinstance(all_of, list):
        branch_enums = [e for v in all_of if isinstance(v, dict) if (e := _extract_enum(v))]
        if branch_enums:
            intersected = [v for v in branch_enums[0] if all(v in b for b in branch_enums[1:])]
            if intersected:
                return intersected
    return None


def model_enum(endpoint_id: str, field: str = "model") -> list[str] | None:
    """Return the model-variant enum the active spec carries for
    ``endpoint_id``'s ``field`` request property, or None when the spec has no
    enum there (callers fall back to their hardcoded lists).

    The request schema is already ``$ref``-resolved by ``_resolve``, so a plain
    property walk suffices. Reading from the active spec (user cache when
    fresh, else the vendored copy) means a spec refresh surfaces new partner
    models with zero code changes."""
    try:
        endpoint = get_endpoint(endpoint_id)
    except SpecError:
        return None
    prop = _find_property(endpoint.request_schema or {}, field)
    if prop is None:
        return None
    return _extract_enum(prop)


def _find_property(schema: dict[str, Any], field: str) -> dict[str, Any] | None:
    """Locate ``field`` in ``schema['properties']``, descending into top-level
    ``allOf``/``anyOf``/``oneOf`` composition when the schema carries no direct
    match — a composed request body must not silently defeat the spec-derived
    enum and fall back to the hardcoded list."""
    props = schema.get("properties")
    if isinstance(props, dict):
        prop = props.get(field)
        if isinstance(prop, dict):
            return prop
    for key in ("allOf", "anyOf", "oneOf"):
        variants = schema.get(key)
        if not isinstance(variants, list):
            continue
        for variant in variants:
            if isinstance(variant, dict):
                found = _find_property(variant, field)
                if found is not None:
                    return found
    return None


def _unknown_endpoint_message(endpoint_id: str) -> str:
    """Build a helpful error suggesting close matches."""
    import difflib
    import re

    candidates = list(_registry().keys()) + list(_ALIASES.keys())
    close = difflib.get_close_matches(endpoint_id, candidates, n=3, cutoff=0.5)

    # Add family candidates keyed on the leading token.
    head = re.split(r"[-_/.]", endpoint_id.lower(), 1)[0]
    if len(head) >= 3:
        family = [c for c in candidates if c.lower().startswith(head) and c not in close]
        close = (close + sorted(family))[:6]

    msg = f"Unknown model: {endpoint_id!r}."
    if close:
        msg += "\nDid you mean: " + ", ".join(close) + "?"
    msg += "\nRun `comfy generate list` to see available models."
    return msg


def validate_spec_text(text: str) -> dict[str, Any]:
    """Parse a raw openapi spec body with the same loader ``load_raw_spec`` uses
    and require a top-level ``paths`` mapping.

    The body may be YAML or JSON — JSON is a subset of YAML 1.2, and
    ``_YamlLoader`` only restricts bool resolution, so a JSON spec (as served at
    ``api.comfy.org/openapi``) parses. Raises :class:`SpecError` if the body does
    not parse or lacks ``paths``; callers use this to avoid caching a
    200-with-garbage response, which would poison the on-disk cache for
    ``CACHE_TTL_SECONDS``.
    """
    try:
        parsed = yaml.load(text, Loader=_YamlLoader)
    except yaml.YAMLError as e:
        raise SpecError(f"spec did not parse: {e}") from e
    if not isinstance(parsed, dict) or not isinstance(parsed.get("paths"), dict):
        raise SpecError("spec has no top-level 'paths' mapping")
    return parsed


def write_cache(yaml_text: str) -> Path:
    """Write `yaml_text` to the user cache, ensuring the parent dir exists."""
    _USER_CACHE.parent.mkdir(parents=True, exist_ok=True)
    _USER_CACHE.write_text(yaml_text, encoding="utf-8")
    # Invalidate in-process cache so the next load picks it up.
    load_raw_spec.cache_clear()
    _registry.cache_clear()
    return _USER_CACHE


def active_spec_path() -> Path:
    return _select_spec_path()
