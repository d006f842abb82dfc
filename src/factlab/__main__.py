import sys

from factlab.cli import main

sys.exit(main())
