import sys

from ssblab.cli import run

sys.exit(run())
