"""Install a registry (CNR) pack with ComfyUI-Manager's own code, vendored unchanged.

The path is the one Manager's Install button takes for a registry pack:
UnifiedManager.cnr_install -> cnr_utils.install_node (GET {registry}/nodes/{id}/install)
-> manager_downloader.download_url -> manager_util.extract_package_as_zip, then the `.tracking` file.

usage: comfyui-manager-install.py <registry url> <custom_nodes dir> <user dir> <node id> [version]
Exit 0 when Manager reports success, 1 with its message otherwise.
"""

import os
import shutil
import sys
import types
import urllib.request

registry_url, custom_nodes, user_dir, node_id = sys.argv[1:5]
version_spec = sys.argv[5] if len(sys.argv) > 5 else None

VENDOR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "test-support", "vendor", "ComfyUI-Manager")
sys.path.insert(0, os.path.abspath(os.path.join(VENDOR, "glob")))

# ComfyUI's own module, which Manager imports when ComfyUI loads it as a custom node: it names the
# custom_nodes folder Manager installs into and the user folder where it keeps its config and cache
# (without it Manager would write them beside its vendored source). Having
# get_system_user_directory is how Manager recognises a current ComfyUI.
folder_paths = types.ModuleType("folder_paths")
folder_paths.get_folder_paths = lambda kind: [custom_nodes] if kind == "custom_nodes" else []
folder_paths.get_user_directory = lambda: user_dir
folder_paths.get_system_user_directory = lambda name="system": os.path.join(user_dir, "__" + name)
sys.modules["folder_paths"] = folder_paths

# huggingface_hub has no Debian package; manager_downloader imports HfApi at its top only for
# model downloads from Hugging Face, never called when installing a node pack.
huggingface_hub = types.ModuleType("huggingface_hub")


class HfApi:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Hugging Face downloads are not part of this harness")


huggingface_hub.HfApi = HfApi
sys.modules["huggingface_hub"] = huggingface_hub


# manager_downloader.download_url hands the HTTP GET to torchvision.datasets.utils.download_url,
# which ComfyUI's torch install provides; torch is far too heavy for the tests. This stand-in keeps
# that function's signature and its behaviour for a plain URL: urllib GET, redirects followed,
# the body streamed to root/filename.
def torchvision_download_url(url, root, filename=None, md5=None, max_redirect_hops=3):
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, filename or os.path.basename(url))
    request = urllib.request.Request(url, headers={"User-Agent": "pytorch/vision"})
    with urllib.request.urlopen(request) as response, open(path, "wb") as out:
        shutil.copyfileobj(response, out)


torchvision = types.ModuleType("torchvision")
torchvision_datasets = types.ModuleType("torchvision.datasets")
torchvision_utils = types.ModuleType("torchvision.datasets.utils")
torchvision_utils.download_url = torchvision_download_url
torchvision.datasets = torchvision_datasets
torchvision_datasets.utils = torchvision_utils
sys.modules.update(
    {"torchvision": torchvision, "torchvision.datasets": torchvision_datasets, "torchvision.datasets.utils": torchvision_utils}
)

import cnr_utils  # noqa: E402
import manager_core  # noqa: E402

# Manager has no setting for the registry's address: cnr_utils.base_url is https://api.comfy.org.
# A closed network points that name at its own registry; here the module attribute is set instead.
cnr_utils.base_url = registry_url.rstrip("/")

result = manager_core.unified_manager.cnr_install(node_id, version_spec)
if not result.result:
    print(f"ComfyUI-Manager: install failed: {result.msg}", file=sys.stderr)
    sys.exit(1)
print(f"ComfyUI-Manager: installed {node_id} into {result.to_path}")
