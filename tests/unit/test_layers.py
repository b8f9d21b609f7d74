"""The package layers hold: no two top-level packages or modules of humeval import each other, and no library
package imports the orchestration above it (the pipeline, the stages, collection, the CLI, the demo, rehearsals).

An AST scan of every module: imports inside functions count, imports under ``if TYPE_CHECKING:`` do not (they
never run).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import humeval

SRC = Path(humeval.__file__).parent
#: what runs the library: nothing below may import these
ORCHESTRATION = {"pipeline", "stages", "collect", "cli", "demo", "rehearsal", "__main__"}
LIBRARY = {"store", "platforms", "analysis", "sampling", "design", "report", "stats", "stopping", "simulate",
           "policies", "metrics", "data", "protocol", "render", "server", "judgements", "results", "files"}


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines |= {n.lineno for sub in node.body for n in ast.walk(sub) if hasattr(n, "lineno")}
    return lines


def _top(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "humeval":
        return None
    return parts[1] if (SRC / parts[1]).is_dir() or (SRC / f"{parts[1]}.py").is_file() else None


def _imports() -> list[tuple[str, str, str, int]]:
    """(importing module, its top-level part, imported top-level part, line) for every import between parts."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        is_package = path.name == "__init__.py"
        name = ".".join(rel.parts[:-1] if is_package else rel.parts)
        package = name if is_package else name.rpartition(".")[0]
        me = _top(name)
        if me is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([base] if base else [])])
                targets = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            if node.lineno in skip:
                continue
            for target in targets:
                other = _top(target)
                if other is not None and other != me:
                    found.append((name, me, other, node.lineno))
    return found


def test_no_two_top_level_parts_import_each_other():
    edges: dict[tuple[str, str], str] = {}
    for name, me, other, line in _imports():
        edges.setdefault((me, other), f"{name}:{line}")
    pairs = sorted(f"{a} <-> {b} ({edges[a, b]}, {edges[b, a]})" for a, b in edges if (b, a) in edges and a < b)
    assert pairs == []


def test_no_library_package_imports_the_orchestration():
    upward = sorted(f"{name}:{line} -> humeval.{other}" for name, me, other, line in _imports()
                    if me in LIBRARY and other in ORCHESTRATION)
    assert upward == []


def test_the_scan_sees_imports_inside_functions_and_skips_type_checking_ones():
    # the scan's two rules, checked on the pipeline itself: it imports the stages at the top, and the study
    # imports the design's types only inside its methods
    found = {(me, other) for _, me, other, _ in _imports()}
    assert ("pipeline", "stages") in found and ("study", "design") in found
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import humeval.cli\nimport os\n")
    assert _type_checking_lines(tree) == {3}


def test_importing_the_pipeline_imports_no_stage_library():
    # the pipeline imports every stage; each stage imports its library when it runs
    code = ("import sys, humeval.pipeline; print(sorted(m for m in ('numpy', 'pandas', 'scipy', 'matplotlib', "
            "'humeval.analysis.plan', 'humeval.design.lists', 'humeval.report.build') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
