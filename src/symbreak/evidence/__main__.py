"""Regenerate the claims-to-evidence index: ``python -m symbreak.evidence [root]`` writes ``root/book/evidence.md``.

``root`` is the repository's root, the current directory by default.
"""

from __future__ import annotations

import sys
from pathlib import Path

from symbreak.evidence.page import write

if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    changed = write(root)
    print(f"{root / 'book' / 'evidence.md'}: {'written' if changed else 'unchanged'}")
