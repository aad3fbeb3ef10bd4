import os

PathLike = os.PathLike[str] | str
