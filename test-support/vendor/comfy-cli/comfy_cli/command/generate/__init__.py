from comfy_cli.command.generate.app import register_with

__all__ = ["register_with"]
