import sys

from optzoo.cli import main

sys.exit(main())
