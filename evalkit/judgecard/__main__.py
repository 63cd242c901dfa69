import sys

from evalkit.judgecard.cli import main

sys.exit(main())
