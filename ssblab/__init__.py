"""ssblab: a Jupyter-centred data-analysis and interop kit for Secure Scuttlebutt.

The top level is the thin waist (`ssblab.core`): ``import ssblab`` loads nothing heavier. The other layers are
subpackages imported by name: `ssblab.store`, `ssblab.net`, `ssblab.generate`, `ssblab.sim`, and so on.
"""

from ssblab import core
from ssblab.core import *  # noqa: F403  (the core's public names are the top-level API, listed once there)

__version__ = "0.1.0"

__all__ = [*core.__all__, "__version__"]
