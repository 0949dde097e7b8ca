"""`python -m deptree.cli`: the `deptree` console script."""
import sys

from . import main

sys.exit(main())
