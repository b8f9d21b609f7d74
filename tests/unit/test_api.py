"""The public API: a small ``humeval`` namespace, ``humeval.Study`` with a method per job, and one way to give a study."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import humeval
from humeval.errors import HumevalError
from humeval.study import StudyFolder as StudyFiles
from humeval.study import as_study

SRC = Path(humeval.__file__).parent


def test_the_namespace_is_small_and_every_name_resolves():
    assert len(humeval.__all__) <= 20
    assert sorted(dir(humeval)) == sorted(humeval.__all__)
    for name in humeval.__all__:
        assert getattr(humeval, name) is not None, name
    for gone in ("budget", "prolific_create", "ProlificClient", "prereg", "read_pilot", "lock_study"):
        with pytest.raises(AttributeError, match=gone):
            getattr(humeval, gone)


def test_as_study_takes_a_study_a_folder_or_a_protocol_file(tmp_path):
    root = humeval.init_study(tmp_path / "s", "pairwise", items=4).parent
    study = humeval.Study.open(root)
    assert as_study(study) is study
    assert as_study(str(root)).root == root
    assert as_study(root / "humeval.yaml").root == root
    assert isinstance(study, StudyFiles)  # what the library takes


def test_the_methods_call_the_public_functions(tmp_path):
    study = humeval.Study.init(tmp_path / "s", "pairwise", items=4, seed=3)
    assert isinstance(study, humeval.Study)
    assert study.validate() == []
    assert study.read_lock() is None
    lock = study.lock()
    assert study.read_lock() == lock
    assert [r.stage for r in study.run()] == ["sample", "design"]
    assert study.run(["sample", "design"]) == [humeval.run_stage(study.root, "sample"),
                                               humeval.run_stage(str(study.root), "design")]
    assert study.run("design").skipped
    with pytest.raises(HumevalError, match="options go with one stage"):
        study.run(["sample", "design"], options={"x": 1})
    assert [e["stage"] for e in study.logbook()][:3] == ["lock", "sample", "design"]
    study.unlock("a test")
    assert study.read_lock() is None
    from humeval.lock import check_lock, read_lock

    assert read_lock(str(study.root)) is None and check_lock(study.root / "humeval.yaml") is None


def test_every_public_function_taking_a_study_takes_a_folder():
    from humeval.costs import budget, budget_of, launch_budget
    from humeval.lock import check_lock, lock_study, read_lock, release_lock
    from humeval.pipeline import (
        export_batch,
        export_judgements,
        import_judgements,
        judge,
        prepare_collection,
    )
    from humeval.platforms.prolific import (
        prolific_bonus,
        prolific_create,
        prolific_review,
        prolific_status,
        prolific_sync,
        prolific_transition,
    )
    from humeval.rehearsal import rehearse, rehearse_with
    from humeval.report.prereg import prereg

    functions = [humeval.run, humeval.run_stage, humeval.serve, humeval.validate_study, budget, budget_of, judge,
                 prepare_collection, export_batch, import_judgements, launch_budget, prolific_bonus, prolific_create,
                 prolific_review, prolific_status, prolific_sync, prolific_transition, check_lock, lock_study,
                 read_lock, release_lock, rehearse, rehearse_with, prereg, export_judgements]
    for f in functions:
        first = next(iter(inspect.signature(f).parameters.values()))
        assert (first.name, first.annotation) == ("study", "StudyLike"), f.__qualname__


def test_the_library_never_imports_the_api_module():
    """humeval.api calls the orchestrators, which take humeval.study.StudyFolder: an import back would be a cycle."""
    importers = []
    for path in SRC.rglob("*.py"):
        if path.name == "__init__.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module == "humeval.api"
                                                     or (node.module == "humeval" and any(a.name in ("api", "Study") for a in node.names))):
                importers.append(str(path.relative_to(SRC)))
    assert importers == []


def test_budget_and_rehearse_take_their_typed_options_or_its_fields(tmp_path):
    from humeval.costs import BudgetOptions, budget
    from humeval.rehearsal import RehearsalOptions

    study = humeval.Study.init(tmp_path / "s", "pairwise", items=4, seed=3)
    study.lock()
    study.run()
    typed = study.budget(BudgetOptions(predict=False))
    assert typed == study.budget(predict=False) == budget(study.root, predict=False)
    assert typed.places > 0
    with pytest.raises(HumevalError, match=r"Study.budget: unknown option 'predicts'. Did you mean 'predict'\?"):
        study.budget(predicts=False)
    with pytest.raises(HumevalError, match="give a BudgetOptions or its fields as keywords, not both"):
        study.budget(BudgetOptions(), predict=False)
    with pytest.raises(HumevalError, match=r"Study.rehearse: unknown option 'participant'. Did you mean 'participants'\?"):
        study.rehearse(participant=3)
    with pytest.raises(HumevalError, match="give a RehearsalOptions or its fields as keywords, not both"):
        study.rehearse(RehearsalOptions(kind="normal"), kind="static")


def test_serve_prereg_and_posthoc_take_their_typed_options_or_its_fields(tmp_path):
    from humeval.analysis.posthoc import PosthocOptions
    from humeval.collect import ServeOptions, serve_with
    from humeval.report.prereg import PreregOptions

    study = humeval.Study.init(tmp_path / "s", "pairwise", items=4, seed=3)
    study.lock()
    study.run()
    typed = study.prereg(PreregOptions(out_dir=tmp_path / "typed", registry="https://osf.io/x"))
    keywords = study.prereg(out_dir=tmp_path / "keywords", registry="https://osf.io/x")
    assert typed.signature == keywords.signature and typed.files == keywords.files
    assert (tmp_path / "typed" / "heds.json").read_bytes() == (tmp_path / "keywords" / "heds.json").read_bytes()
    with pytest.raises(HumevalError, match=r"Study.prereg: unknown option 'out'. Did you mean 'out_dir'\?"):
        study.prereg(out="x")
    with pytest.raises(HumevalError, match=r"Study.serve: unknown option 'prot'. Did you mean 'port'\? Available: "):
        study.serve(prot=8001)
    with pytest.raises(HumevalError, match="give a ServeOptions or its fields as keywords, not both"):
        study.serve(ServeOptions(), port=8001)
    with pytest.raises(HumevalError, match="--port: a TCP port is 1-65535, got 70000"):
        serve_with(study, ServeOptions(port=70000))
    with pytest.raises(HumevalError, match=r"Study.posthoc: unknown option 'correlations'. Did you mean 'correlation'\?"):
        study.posthoc("extra", correlations="spearman")
    with pytest.raises(HumevalError, match="give a PosthocOptions or its fields as keywords, not both"):
        study.posthoc("extra", PosthocOptions(), force=True)
    with pytest.raises(HumevalError, match="posthoc: nothing to do"):
        study.posthoc("extra", PosthocOptions())


def test_one_class_is_named_study() -> None:
    """``humeval.Study`` is the only class of that name; the library's folder class is ``StudyFolder``."""
    import re
    from pathlib import Path

    src = Path(humeval.__file__).parent
    named = [p.relative_to(src).as_posix() for p in src.rglob("*.py") if re.search(r"^class Study\b", p.read_text(), re.M)]
    assert named == ["api.py"]
    assert issubclass(humeval.Study, StudyFiles)
