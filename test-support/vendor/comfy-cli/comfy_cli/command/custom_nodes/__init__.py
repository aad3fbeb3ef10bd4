from .command import app, manager_app

__all__ = ["app", "manager_app"]
