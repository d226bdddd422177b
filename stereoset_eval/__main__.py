"""``python -m stereoset_eval``: the same command line as ``stereoset-eval``."""

import sys

from stereoset_eval.cli.main import main

sys.exit(main())
