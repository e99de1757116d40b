"""Fetch the GraphFrames JAR into the project's cache (``make test``/``make demo`` run this first).

Same as ``python -m ssblab.pipeline.graphframes_jar``; kept as a script so it runs from a fresh clone before
the package is installed. Honours ``SSBLAB_JAR_DIR``; prints the JAR path.
"""

import sys
from pathlib import Path

# Run from a clone without installing ssblab: the repository root holds the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ssblab.pipeline.graphframes_jar import main

if __name__ == "__main__":
    sys.exit(main())
