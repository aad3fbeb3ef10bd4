"""JSON Schema resources for comfy-cli output.

Schemas live next to this module so ``importlib.resources`` can load them on
the installed CLI as well as the dev checkout. The mapping from command path
to schema is defined in :mod:`comfy_cli.discovery`.
"""
