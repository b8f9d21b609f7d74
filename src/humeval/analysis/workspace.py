"""Where the back half of the pipeline reads and writes: one results folder.

The collected judgements of a study live in ``results/judgements.jsonl`` (written by
``humeval export`` of the collection server, or by a platform import). Every file the
back half writes sits next to them, so a dry run of kind ``k`` uses the same layout under
``results/dry-run/<k>/``:

====================  ===========================================================
``judgements.jsonl``  the collected judgements (input; never modified)
``collation.json``    completeness per task and the verdict (``collate``)
``rerun/``            the re-run file in the platform's format when incomplete
``excluded.jsonl``    one row per excluded participant/judgement and rule (``exclude``)
``exclusion.json``    counts per rule
``results.json``      the preregistered analysis with its signature (``analyze``)
``tables/``           tidy CSVs of every result
``figures/``          PNG figures (``report``)
``report.html/.md``   the report; ``heds.json`` the HEDS 2.0 datasheet
``posthoc/<name>/``   post hoc analyses, marked as such (``posthoc``)
====================  ===========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from humeval.results import Results
    from humeval.study import StudyFolder

__all__ = ["Workspace", "excluded_table", "read_excluded", "read_results", "read_study_judgements", "study_workspace"]


@dataclass(frozen=True)
class Workspace:
    """A results folder (``results/`` of a study, or ``results/dry-run/<kind>/``)."""

    root: Path
    #: ``None`` for the real study; the dummy kind for a dry run
    dry_run: str | None = None

    @property
    def judgements(self) -> Path:
        return self.root / "judgements.jsonl"

    @property
    def collation(self) -> Path:
        return self.root / "collation.json"

    @property
    def rerun_dir(self) -> Path:
        return self.root / "rerun"

    @property
    def excluded(self) -> Path:
        return self.root / "excluded.jsonl"

    @property
    def exclusion(self) -> Path:
        return self.root / "exclusion.json"

    @property
    def results(self) -> Path:
        return self.root / "results.json"

    @property
    def tables_dir(self) -> Path:
        return self.root / "tables"

    @property
    def figures_dir(self) -> Path:
        return self.root / "figures"

    @property
    def report_html(self) -> Path:
        return self.root / "report.html"

    @property
    def report_md(self) -> Path:
        return self.root / "report.md"

    @property
    def heds(self) -> Path:
        return self.root / "heds.json"

    @property
    def posthoc_dir(self) -> Path:
        return self.root / "posthoc"


def study_workspace(study: StudyFolder) -> Workspace:
    """The study's own results folder (``results/``)."""
    return Workspace(study.results_dir)


def read_study_judgements(ws: Workspace) -> pd.DataFrame:
    """The collected judgements of ``ws``, with a message saying where they come from when missing."""
    from humeval.errors import DataError
    from humeval.judgements import read_judgements

    if not ws.judgements.is_file():
        raise DataError(
            f"{ws.judgements}: no collected judgements. They are written by `humeval export` (from the collection "
            "server's store) or by a platform import; a dry run writes its own under results/dry-run/<kind>/"
        )
    return read_judgements(ws.judgements)


def excluded_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The exclusion table as the analysis reads it (the rows of ``excluded.jsonl``, every value a string)."""
    import pandas as pd

    from humeval.judgements.exclusion import EXCLUDED_COLUMNS

    return pd.DataFrame(rows, columns=EXCLUDED_COLUMNS).fillna("").astype(str)


def read_excluded(ws: Workspace) -> pd.DataFrame:
    """The exclusion table written by ``exclude`` (refuses when it is missing: run ``exclude`` first)."""
    from humeval.files import read_jsonl

    return excluded_table(read_jsonl(ws.excluded, what="exclusion table yet",
                                     hint="run `humeval exclude` before `humeval analyze`"))


def read_results(ws: Workspace) -> Results:
    from humeval.results import Results

    return Results.read(ws.results, hint="run `humeval analyze` first")
