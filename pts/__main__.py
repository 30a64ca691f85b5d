import sys

from pts.cli.main import main

sys.exit(main())
