import sys

from evalkit.course.cli import main

sys.exit(main())
