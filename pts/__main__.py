import sys

from pts.cli import main

sys.exit(main())
