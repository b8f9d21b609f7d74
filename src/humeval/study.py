"""A study on disk: its folder, its protocol, and where every stage writes (:class:`StudyFolder`).

Every public function that takes a study takes ``StudyFolder | str | Path`` (:data:`StudyLike`) through
:func:`as_study`. What can be done with a study (validate, lock, run, serve, rehearse...) is ``humeval.Study``
(:class:`humeval.api.Study`), the one class named Study: this folder with a method per job. The folder is a class
of its own because the library takes it and the methods call the library; one class holding both would make every
orchestrator import the class that imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from humeval.files import read_jsonl
from humeval.protocol.load import PROTOCOL_FILE, load_protocol

if TYPE_CHECKING:  # the protocol's models are built when a study's protocol or design is read
    from humeval.data.judges import JudgeScores
    from humeval.data.outputs import Outputs
    from humeval.design.tasks import ParticipantList, Task
    from humeval.protocol.models import Protocol
    from humeval.results import Results

__all__ = ["StudyFolder", "StudyLike", "as_study"]

#: outputs loaded by this process, by content hash (see :meth:`StudyFolder.outputs`)
_OUTPUTS: dict[str, Outputs] = {}


@dataclass(frozen=True)
class StudyFolder:
    """A study folder. Paths are fixed by convention (see DESIGN.md, "A study on disk")."""

    root: Path

    @classmethod
    def open(cls, path: str | Path = ".") -> Self:
        """The study in folder ``path`` (or the folder of protocol file ``path``)."""
        path = Path(path)
        return cls(path.parent if path.is_file() else path)

    @cached_property
    def protocol(self) -> Protocol:
        return load_protocol(self.protocol_file)

    @property
    def protocol_file(self) -> Path:
        return self.root / PROTOCOL_FILE

    @property
    def state_dir(self) -> Path:
        return self.root / ".humeval"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "lock.json"

    @property
    def logbook_file(self) -> Path:
        return self.state_dir / "logbook.jsonl"

    @property
    def items_file(self) -> Path:
        return self.root / "items.jsonl"

    @property
    def lists_dir(self) -> Path:
        return self.root / "lists"

    @property
    def tasks_file(self) -> Path:
        return self.lists_dir / "tasks.jsonl"

    @property
    def lists_file(self) -> Path:
        return self.lists_dir / "lists.jsonl"

    @property
    def texts_file(self) -> Path:
        """What participants are shown of each (item, system) the design's tasks show (``lists/texts.jsonl``):
        written by the design stage from :meth:`outputs`, so that seeding a store needs no data tables."""
        return self.lists_dir / "texts.jsonl"

    def read_tasks(self) -> list[Task]:
        """Every task of the design (``lists/tasks.jsonl``)."""
        from humeval.design.tasks import Task

        return [Task.from_json(r) for r in self._read_design(self.tasks_file, "tasks")]

    def read_lists(self, tasks: list[Task] | None = None) -> list[ParticipantList]:
        """The participant lists of the design (``lists/lists.jsonl``; their tasks by id from
        ``lists/tasks.jsonl``, or from ``tasks`` when the caller has read them already)."""
        from humeval.design.tasks import ParticipantList

        by_id = {t.task_id: t for t in (self.read_tasks() if tasks is None else tasks)}
        return [ParticipantList.from_json(r, by_id) for r in self._read_design(self.lists_file, "participant lists")]

    def _read_design(self, path: Path, what: str) -> list[dict[str, Any]]:
        return read_jsonl(path, what=what, hint=f"run `humeval run {self.root}` (sample and design) first")

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    def results(self, name: str = "main") -> Results:
        """The results called ``name``: ``main`` (``results/results.json``), ``rehearsal``,
        ``dry-run/<kind>`` or ``posthoc/<name>`` (their folders under ``results/``)."""
        from humeval.errors import DataError
        from humeval.results import Results

        writers = {"main": "humeval analyze", "rehearsal": "humeval rehearse", "dry-run": "humeval dry-run",
                   "posthoc": "humeval posthoc"}
        kind, _, sub = name.partition("/")
        single = kind in ("main", "rehearsal") and not sub
        nested = kind in ("dry-run", "posthoc") and sub and "/" not in sub and sub not in (".", "..")
        if not (single or nested):
            raise DataError(f"{self.root}: unknown results '{name}'; available: "
                            f"{', '.join(self.available_results()) or 'none yet'} (names: main, rehearsal, "
                            "dry-run/<kind>, posthoc/<name>)")
        folder = self.results_dir if kind == "main" else self.results_dir / kind / sub
        writer = writers[kind] + (f" {sub}" if kind == "posthoc" else "")
        return Results.read(folder / "results.json", hint=f"`{writer}` writes it")

    def available_results(self) -> list[str]:
        """The names :meth:`results` can read in this study (those whose results.json exists)."""
        out = ["main"] if (self.results_dir / "results.json").is_file() else []
        if (self.results_dir / "rehearsal" / "results.json").is_file():
            out.append("rehearsal")
        for kind in ("dry-run", "posthoc"):
            out += [f"{kind}/{p.parent.name}" for p in sorted((self.results_dir / kind).glob("*/results.json"))]
        return out

    @property
    def db_file(self) -> Path:
        return self.root / "study.db"

    def outputs(self) -> Outputs:
        """The study's validated outputs, loaded once per process (cached by the content hash of the
        data files and of the protocol's ``data`` and ``systems``)."""
        from humeval.data.outputs import Outputs  # pandas: only for the stages that need outputs
        from humeval.hashing import sha256_json

        files = self.hashes(self.data_files())
        sampling = self.protocol.sampling
        pairing = [sampling.pairing.model_dump(mode="json"), sampling.seed, self.protocol.study.seed] if sampling.pairing else None
        key = sha256_json([files, self.protocol.data.model_dump(mode="json"), self.protocol.systems, pairing])
        if key not in _OUTPUTS:
            _OUTPUTS.clear()  # one study's outputs at a time: a process rarely needs two
            _OUTPUTS[key] = Outputs.load(self.protocol, self.root)
        return _OUTPUTS[key]

    def data_files(self) -> list[Path]:
        """The data files the protocol names (they need not exist)."""
        return [self.root / f for f in self.protocol.data.files]

    def judge_files(self) -> list[Path]:
        """The automatic judges' files the protocol names (``data.judges``; they need not exist)."""
        return [self.root / j.file for j in self.protocol.data.judges]

    def prompt_files(self) -> list[Path]:
        """The prompt files of the judges `humeval judge` asks (``data.judges[].llm.prompt_file``)."""
        return [self.root / j.llm.prompt_file for j in self.protocol.data.judges if j.llm is not None and j.llm.prompt_file]

    def input_files(self) -> list[Path]:
        """Every input the lock pins: the data files, the judges' files, the judges' prompt files and the arena's files.

        The file of a judge with ``llm`` is not an input: ``humeval judge`` writes it (after the lock,
        like the human judgements) from what the lock pins, its protocol section and prompt file."""
        made = {j.file for j in self.protocol.data.judges if j.llm is not None}
        files = [self.root / j.file for j in self.protocol.data.judges if j.file not in made]
        return [*self.data_files(), *files, *self.prompt_files(), *self.arena_files()]

    def arena_files(self) -> list[Path]:
        """The files of the ``arena`` section: its prompt file and its recorded models' tables and prompt files."""
        arena = self.protocol.arena
        if arena is None:
            return []
        names = [arena.prompts.file, *(getattr(m, key, "") for m in arena.models for key in ("table", "prompts"))]
        return [self.root / name for name in dict.fromkeys(names) if name]

    def judges(self) -> dict[str, JudgeScores]:
        """Every declared judge's scores, checked against the outputs (name -> :class:`JudgeScores`)."""
        from humeval.data.judges import read_judge

        outputs = self.outputs()
        items = set(outputs.frame["item_id"].astype(str))
        return {j.name: read_judge(j, self.root, items, outputs.systems) for j in self.protocol.data.judges}

    def hashes(self, paths: list[Path]) -> list[dict[str, str]]:
        """``[{"path", "sha256"}]`` of ``paths`` (relative to the folder; ``missing`` for absent files)."""
        from humeval.hashing import sha256_file

        return [{"path": self.relative(p), "sha256": sha256_file(p) if p.is_file() else "missing"} for p in paths]

    def relative(self, path: Path) -> str:
        """``path`` relative to the study folder (as recorded in the lock and logbook)."""
        try:
            return str(Path(path).resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path)


#: what every public function taking a study accepts: a :class:`StudyFolder` (``humeval.Study`` is one), or its
#: folder (or protocol file)
StudyLike = StudyFolder | str | Path


def as_study(study: StudyLike) -> StudyFolder:
    """``study`` itself, or the study in folder (or of protocol file) ``study``."""
    return study if isinstance(study, StudyFolder) else StudyFolder.open(study)
