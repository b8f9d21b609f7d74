"""``humeval validate``: every check of a study, all problems reported at once."""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path

import yaml

from humeval.errors import HumevalError, ProtocolError, did_you_mean
from humeval.protocol.load import line_of, parse_protocol, read_yaml
from humeval.protocol.models import Protocol
from humeval.study import Study

__all__ = ["CHECKS", "check_protocol", "validate_study"]

#: what ``validate`` checks (shown in ``humeval validate --help``)
CHECKS = (
    "the protocol parses: YAML syntax, known keys, types, ranges (every problem with its field path and line)",
    "data files exist and parse (JSONL, CSV, Parquet) and have the declared columns",
    "item ids are non-empty and consistent across systems (every item has every system)",
    "no duplicate (item, system) rows",
    "every referenced criterion and system exists (systems, stopping, analysis, dry_run)",
    "sampler and stopping rule names exist and their parameters are valid",
)


def _registered(module: str, attr: str) -> dict | None:
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None


def check_protocol(protocol: Protocol) -> list[str]:
    """Cross-reference problems of a protocol that parsed (empty list: none)."""
    problems = []
    names = [c.name for c in protocol.criteria]
    for name, count in Counter(names).items():
        if count > 1:
            problems.append(f"criteria: criterion name '{name}' is used {count} times; names must be unique")
    from humeval.sampling import SAMPLERS, get_sampler

    if protocol.sampling.method not in SAMPLERS:
        problems.append(f"sampling.method: unknown sampler '{protocol.sampling.method}'. {did_you_mean(protocol.sampling.method, SAMPLERS)}")
    else:
        try:
            get_sampler(protocol.sampling.method, **protocol.sampling.params)
        except HumevalError as exc:
            problems.append(str(exc))
    if protocol.stopping is not None:
        if not protocol.pairwise:
            problems.append("stopping: a stopping rule needs a 2afc criterion; none is declared under criteria")
        rules = _registered("humeval.stopping", "RULES")
        if rules is not None and protocol.stopping.rule not in rules:
            problems.append(f"stopping.rule: unknown rule '{protocol.stopping.rule}'. {did_you_mean(protocol.stopping.rule, rules)}")
        if len(protocol.stopping.systems) not in (0, 2):
            problems.append(f"stopping.systems: name exactly two systems (or none), got {protocol.stopping.systems}")
    for i, name in enumerate(protocol.analysis.criteria):
        if name not in names:
            problems.append(f"analysis.criteria[{i}]: unknown criterion '{name}'. {did_you_mean(name, names)}")
    if protocol.analysis.reliable_agreement < protocol.analysis.tentative_agreement:
        problems.append("analysis.reliable_agreement: must be at least analysis.tentative_agreement")
    if protocol.assignment.strategy != "list" and not protocol.pairwise:
        problems.append(
            f"assignment.strategy: '{protocol.assignment.strategy}' aggregates pairwise choices; it needs a 2afc criterion (use 'list')"
        )
    if protocol.systems:
        for name in protocol.dry_run.static:
            if name not in protocol.systems:
                problems.append(f"dry_run.static: unknown system '{name}'. {did_you_mean(name, protocol.systems)}")
    return problems


def validate_study(path: str | Path = ".") -> list[str]:
    """Run every check in :data:`CHECKS`; return all problems (empty list: the study is valid)."""
    # pandas: imported only when data files are validated (not by `humeval serve --help`)
    from humeval.data.outputs import check_outputs, read_outputs

    study = Study.open(path)
    source = str(study.protocol_file)
    try:
        raw, node = read_yaml(study.protocol_file)
    except ProtocolError as exc:
        return exc.problems
    try:
        protocol = parse_protocol(raw, source=source, node=node)
    except ProtocolError as exc:
        return exc.problems + _raw_file_problems(raw, node, study.root, source)
    problems = check_protocol(protocol)
    outputs, data_problems = read_outputs(protocol.data, protocol.systems, study.root)
    problems += data_problems
    if not data_problems:
        problems += check_outputs(outputs, protocol)
    if protocol.systems and not data_problems:
        present = set(outputs["system"])
        for name in protocol.dry_run.static:
            if name not in present:
                problems.append(f"dry_run.static: unknown system '{name}'")
    return problems


def _raw_file_problems(raw: object, node: yaml.Node | None, root: Path, source: str) -> list[str]:
    """Missing data files, checked on the raw YAML when the protocol itself does not parse."""
    try:
        files = raw["data"]["files"]  # type: ignore[index]
    except (KeyError, TypeError):
        return []
    if not isinstance(files, list):
        return []
    return [
        f"{source}:{line_of(node, ('data', 'files', i))}: data.files[{i}]: data file not found: {root / str(f)}"
        for i, f in enumerate(files)
        if not (root / str(f)).is_file()
    ]
