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

__all__ = ["Workspace"]


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
