"""CQL public surface.

Public entry points:
    resilient_load_object_info(mode=..., host=..., port=..., input_path=...) -> dict
"""

from comfy_cli.cql.errors import CQLRuntimeError
from comfy_cli.cql.loader import resilient_load_object_info

__all__ = ["CQLRuntimeError", "resilient_load_object_info"]
