#!/usr/bin/env python3
"""Set-up and everyday commands that work on a fresh machine with only Python 3.11 and pip.

    python3 make.py example   # install into .venv, then run the demo study (`humeval demo example-study`)
    python3 make.py test      # install into .venv (with test tools), then run the whole test suite

Each command creates ``.venv`` (if missing), installs humeval with what it needs, and runs.
Extra arguments after ``test`` go to pytest; after ``example``, the first is the study folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("HUMEVAL_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


def sh(*cmd: object, **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def install(extras: str) -> None:
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    sh(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    sh(PY, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[{extras}]")


def chromium() -> None:
    """Browser tests drive Debian's Chromium; report figures with Chinese, Japanese or Korean labels need a
    CJK font (WenQuanYi Micro Hei, small). Install what is missing when we may."""
    wanted = [pkg for pkg, path in (("chromium", "/usr/bin/chromium"),
                                    ("fonts-wqy-microhei", "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"))
              if not Path(path).exists()]
    if not wanted:
        return
    apt = shutil.which("apt-get")
    if apt and hasattr(os, "geteuid") and os.geteuid() == 0:
        sh(apt, "-qq", "update")
        sh(apt, "-qq", "install", "-y", "--no-install-recommends", *wanted, env=os.environ | {"DEBIAN_FRONTEND": "noninteractive"})
    else:
        print(f"note: missing {', '.join(wanted)}; install them (Debian) for the browser tests and CJK figures", file=sys.stderr)


def example(args: list[str]) -> int:
    """``humeval demo``: the example study (dynamic stopping, RankME) run end to end by a simulated crowd."""
    install("server,analysis,parquet,metrics")
    study = Path(args[0] if args else ROOT / "example-study")
    if study.exists():
        shutil.rmtree(study)
    sh(BIN / "humeval", "demo", study)
    activate = BIN / ("activate.bat" if os.name == "nt" else "activate")
    print(f"\nhumeval is installed in {VENV}, not on your PATH: to run `humeval` yourself, activate it "
          f"({'' if os.name == 'nt' else 'source '}{activate}) or call {BIN / 'humeval'}", file=sys.stderr)
    return 0


def test(args: list[str]) -> int:
    install("server,analysis,parquet,postgres,metrics,dask,dev")
    chromium()
    # two worker processes (pytest-xdist: about 4.5 min instead of 6.2 on a quiet 2-core machine); arguments given
    # come after, so `python3 make.py test -n 0` runs in one process
    return subprocess.run([str(PY), "-m", "pytest", "-n", "2", *args], cwd=ROOT).returncode


def main() -> int:
    commands = {"example": example, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
