import sys
from pathlib import Path

# Test helper modules (notebook_tools) are importable without making tests/ a package.
sys.path.insert(0, str(Path(__file__).parent))
