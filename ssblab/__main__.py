import sys

from ssblab.cli import main

sys.exit(main())
