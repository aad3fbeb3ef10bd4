from .api import NodeFetchError, RegistryAPI, RegistryAPIError
from .config_parser import extract_node_configuration, initialize_project_config
from .types import Node, NodeVersion, PublishNodeVersionResponse, PyProjectConfig

__all__ = [
    "RegistryAPI",
    "RegistryAPIError",
    "NodeFetchError",
    "extract_node_configuration",
    "PyProjectConfig",
    "PublishNodeVersionResponse",
    "NodeVersion",
    "Node",
    "initialize_project_config",
]
