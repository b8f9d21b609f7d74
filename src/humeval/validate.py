"""``humeval validate``: every check of a study, all problems reported at once."""

from __future__ import annotations

import difflib
import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from humeval.errors import DataError, HumevalError, ProtocolError, did_you_mean
from humeval.platforms.registry import PLATFORMS, platform_of
from humeval.protocol.comparisons import goal_problems
from humeval.protocol.feed import feed_problems
from humeval.protocol.load import duplicate_keys, format_path, line_of, parse_protocol, read_yaml
from humeval.protocol.models import Protocol
from humeval.study import StudyFolder, StudyLike, as_study
from humeval.tasks import TASK_TYPES

if TYPE_CHECKING:
    from humeval.data.columns import OutputColumns

__all__ = ["CHECKS", "check_protocol", "cross_references", "study_warnings", "validate_study"]

#: what ``validate`` checks (shown in ``humeval validate --help``)
CHECKS = (
    "the protocol parses: YAML syntax, no key given twice, known keys, types, ranges "
    "(every problem with its line and field path)",
    "data files exist and parse (JSONL, CSV, Parquet) and have the declared columns",
    "item ids are non-empty and consistent across systems (every item has every system)",
    "no duplicate (item, system) rows",
    "every referenced criterion and system exists (systems, stopping, analysis, dry_run), with its line, "
    "in the same pass as the schema problems",
    "sampler, stopping rule and labelling strategy names exist and their parameters can run "
    "(e.g. hoeffding-lastrun needs stopping.max_judgements; the stopping rule compares two named systems)",
    "sessions can work: stopping.sessions at most the lists that hold watched pair tasks, crowd.wave at most the "
    "lists, some list holds a watched task (counted in lists/lists.jsonl after `humeval design`, else estimated "
    "from the design with every item selected); settings without effect are warned about",
    "stopping.feed: judgement only with the list strategy, a qualification holding every attention check, an "
    "attention rule, and no exclusion rule that could take back what was fed (only attention and judgement-scope "
    "min-time)",
)

Problem = tuple[tuple[Any, ...], str]


def _recruiting() -> list[str]:
    """The platforms humeval opens places on (their ``recruit``)."""
    return [name for name in PLATFORMS if "recruit" in platform_of(name).operations()]


def _pairwise(type_name: object) -> bool:
    """Whether a criterion's ``type`` as written in the YAML names a pairwise task type (an unknown one: no)."""
    return isinstance(type_name, str) and type_name in TASK_TYPES and TASK_TYPES.get(type_name).pairwise


def _arena_type(type_name: object) -> bool:
    """Whether a criterion's ``type`` as written in the YAML names an arena battle's task type."""
    return isinstance(type_name, str) and type_name in TASK_TYPES and TASK_TYPES.get(type_name).arena


def _arena_problems(raw: Any, root: Path | None) -> list[Problem]:
    """The ``arena`` section against the rest: its battles are criteria of an arena type, its models are the
    study's systems, its files exist (``root``: the study folder; None: not checked)."""
    arena = _get(raw, "arena")
    if not isinstance(arena, dict):
        return []
    problems: list[Problem] = []
    criteria = [c for c in _list(_get(raw, "criteria")) if isinstance(c, dict)]
    if not any(_arena_type(c.get("type")) for c in criteria):
        kinds = [name for name in TASK_TYPES.names() if TASK_TYPES.get(name).arena]
        problems.append((("arena",), f"an arena's votes are a criterion of type {' or '.join(kinds)}, and no "
                         f"criterion has it (criteria: {', '.join(str(c.get('type')) for c in criteria) or 'none'}); "
                         f"add one: - {{name: vote, type: {kinds[0]}, question: \"Which answer is better?\"}}"))
    models = [m for m in _list(arena.get("models")) if isinstance(m, dict)]
    names = [str(m.get("name")) for m in models]
    declared = [str(s) for s in _list(_get(raw, "systems"))]
    if names and declared:
        for i, name in enumerate(names):
            if name not in declared:
                problems.append((("arena", "models", i, "name"), f"model {name!r} is not one of systems "
                                 f"({', '.join(declared)}): an arena's systems are its models; list it in systems"))
        for i, name in enumerate(declared):
            if name not in names:
                problems.append((("systems", i), f"system {name!r} is not one of arena.models ({', '.join(names)}): "
                                 f"an arena's systems are its models. {did_you_mean(name, names)}"))
    if root is not None:
        prompts = arena.get("prompts")
        files: list[tuple[tuple[str | int, ...], Any]] = [
            (("arena", "prompts", "file"), prompts.get("file")) if isinstance(prompts, dict) else (("arena", "prompts"), prompts)]
        files += [(("arena", "models", i, key), m.get(key)) for i, m in enumerate(models) for key in ("table", "prompts")]
        for loc, name in files:
            if isinstance(name, str) and name and not (root / name).is_file():
                problems.append((loc, f"file {name!r} not found in the study folder {root}"))
        problems += _prompt_file_problems(prompts, root)
    return problems


def _prompt_file_problems(prompts: Any, root: Path) -> list[Problem]:
    """The prompts of ``arena.prompts.file`` that break the arena's prompt rules (length, blocklist), each named
    with its id and row: the server would refuse to start on them (:class:`humeval.arena.prompts.PromptPool`)."""
    from pydantic import ValidationError

    from humeval.arena.prompts import PromptPool, describe_problems, read_prompts
    from humeval.protocol.arena import ArenaPrompts

    try:
        rules = ArenaPrompts.model_validate(prompts)
    except ValidationError:
        return []  # the schema check reports it
    if not rules.file or not (root / rules.file).is_file():
        return []
    loc: tuple[str, ...] = ("arena", "prompts", "file") if isinstance(prompts, dict) else ("arena", "prompts")
    try:
        bad = PromptPool(rules, read_prompts(root / rules.file), strict=False).problems()
    except DataError as exc:
        return [(loc, str(exc))]
    if not bad:
        return []
    return [(loc, f"{len(bad)} prompt(s) of {rules.file} break the prompt rules (arena.prompts), and the server "
                  f"would not start: {describe_problems(bad, most=10)}; change those prompts or the rules")]


def _get(raw: Any, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(raw, dict) or key not in raw:
            return default
        raw = raw[key]
    return raw


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list (anything else is a schema problem, reported by the schema check)."""
    return value if isinstance(value, list) else []


def _names(items: Any, key: str = "name") -> list[str]:
    return [str(c[key]) for c in items if isinstance(c, dict) and key in c] if isinstance(items, list) else []


def cross_references(raw: Any, data_systems: list[str] | None = None) -> list[Problem]:
    """Cross-reference problems of a protocol document, as ``(field path, message)``.

    Works on the parsed YAML (plain data), so it runs in the same pass as the schema check,
    also when the schema check failed. ``data_systems``: the systems found in the data files
    (None when they could not be read).
    """
    problems: list[Problem] = []
    criteria = _get(raw, "criteria", default=[])
    names = _names(criteria)
    for name, count in Counter(names).items():
        if count > 1:  # at the second criterion of that name (the first is not the mistake)
            again = [i for i, c in enumerate(criteria) if isinstance(c, dict) and str(c.get("name")) == name][1]
            problems.append((("criteria", again, "name"),
                             f"criterion name '{name}' is used {count} times; names must be unique"))
    pairwise = any(isinstance(c, dict) and _pairwise(c.get("type")) for c in (criteria if isinstance(criteria, list) else []))
    declared = [str(s) for s in _list(_get(raw, "systems"))]
    systems = declared or list(data_systems or [])
    # a declared system absent from the data is reported at its line in `systems`, the likely typo: a reference
    # elsewhere that names the data's spelling of it is then not blamed for it
    declared_problems, spelled_as_data = _declared_system_problems(raw, declared, data_systems)
    problems += declared_problems
    method = _get(raw, "sampling", "method", default="auto")
    from humeval.sampling import SAMPLERS, get_sampler

    if isinstance(method, str) and method not in SAMPLERS:  # a method of another type is a schema problem
        problems.append((("sampling", "method"), f"unknown sampler '{method}'. {did_you_mean(method, SAMPLERS)}"))
    elif isinstance(method, str):
        try:
            params = _get(raw, "sampling", "params")
            get_sampler(str(method), **(params if isinstance(params, dict) else {}))
        except (HumevalError, TypeError, ValueError) as exc:
            problems.append((("sampling", "params"), str(exc).removeprefix("sampling.params: ")))
    problems += _platform_problems(raw)
    stopping = _get(raw, "stopping")
    if isinstance(stopping, dict):
        problems += _stopping_problems(stopping, pairwise, systems, data_systems is not None or bool(_get(raw, "systems")),
                                       spelled_as_data)
    for i, name in enumerate(_list(_get(raw, "analysis", "criteria"))):
        if name not in names:
            problems.append((("analysis", "criteria", i), f"unknown criterion '{name}'. {did_you_mean(name, names)}"))
    tentative = _get(raw, "analysis", "tentative_agreement", default=0.667)
    reliable = _get(raw, "analysis", "reliable_agreement", default=0.8)
    if isinstance(tentative, (int, float)) and isinstance(reliable, (int, float)) and reliable < tentative:
        problems.append((("analysis", "reliable_agreement"), "must be at least analysis.tentative_agreement"))
    strategy = _get(raw, "assignment", "strategy", default="list")
    if strategy != "list" and not pairwise:
        problems.append((("assignment", "strategy"),
                         f"'{strategy}' aggregates pairwise choices; it needs a 2afc criterion (use 'list')"))
    problems += _judge_problems(raw, criteria, names)
    if systems:
        static = _get(raw, "dry_run", "static")
        for name in static if isinstance(static, dict) else {}:
            if name not in systems and name not in spelled_as_data:
                problems.append((("dry_run", "static", name), f"unknown system '{name}'. {did_you_mean(name, systems)}"))
    return problems


def _judge_problems(raw: Any, criteria: Any, names: list[str]) -> list[Problem]:
    """``data.judges``: unique names, known criteria of the kind's type; ``analysis.judges``: declared judges."""
    problems: list[Problem] = []
    types = {c.get("name"): c.get("type") for c in (criteria if isinstance(criteria, list) else []) if isinstance(c, dict)}
    judges = [j for j in _list(_get(raw, "data", "judges")) if isinstance(j, dict)]
    declared = [str(j.get("name")) for j in judges]
    for name, count in Counter(declared).items():
        if count > 1:
            problems.append((("data", "judges"), f"judge name '{name}' is used {count} times; names must be unique"))
    for i, judge in enumerate(judges):
        kind = judge.get("kind", "scores")
        for k, name in enumerate(_list(judge.get("criteria"))):
            if name not in names:
                problems.append((("data", "judges", i, "criteria", k), f"unknown criterion '{name}'. {did_you_mean(name, names)}"))
            elif _pairwise(types.get(name)) != (kind == "verdicts"):
                problems.append((("data", "judges", i, "criteria", k),
                                 f"criterion '{name}' is {types.get(name)}: a judge of kind '{kind}' cannot stand in for it "
                                 f"({'verdicts' if _pairwise(types.get(name)) else 'scores'} can)"))
    for i, name in enumerate(_list(_get(raw, "analysis", "judges"))):
        if name not in declared:
            problems.append((("analysis", "judges", i),
                             f"unknown judge '{name}'. {did_you_mean(name, declared) if declared else 'Declare it under data.judges.'}"))
    return problems


def _declared_system_problems(raw: Any, declared: list[str], data_systems: list[str] | None,
                              ) -> tuple[list[Problem], set[str]]:
    """Each system listed under ``systems`` that the data does not hold, at its line; when another field names a
    close system the data holds, the message names both and points at ``systems`` as the place to correct.
    Also returns those close names (the data's spelling of a misspelt declared system)."""
    if data_systems is None:
        return [], set()
    stopping = _get(raw, "stopping")
    static = _get(raw, "dry_run", "static")
    references = [(f"stopping.systems[{i}]", str(n)) for i, n in enumerate(_list(_get(stopping, "systems")))]
    references += [(f"dry_run.static.{n}", str(n)) for n in (static if isinstance(static, dict) else {})]
    problems: list[Problem] = []
    spellings: set[str] = set()
    for i, name in enumerate(declared):
        if name in data_systems:
            continue
        close = difflib.get_close_matches(name, data_systems, n=1, cutoff=0.6)
        spellings.update(close)
        named = [field for field, ref in references if close and ref == close[0]]
        if named:
            verb = "spells" if len(named) == 1 else "spell"
            message = (f"system '{name}' is not in the data, which has '{close[0]}', as {' and '.join(named)} {verb} "
                       f"it: correct it here to '{close[0]}'. Available in the data: {', '.join(sorted(data_systems))}")
        else:
            message = f"system '{name}' is not in the data. {did_you_mean(name, data_systems)}"
        problems.append((("systems", i), message))
    return problems, spellings


def _stopping_problems(stopping: dict[str, Any], pairwise: bool, systems: list[str], known: bool,
                       spelled_as_data: set[str] | None = None) -> list[Problem]:
    from humeval.stopping.registry import rule_problems

    problems: list[Problem] = []
    if not pairwise:
        problems.append((("stopping",), "a stopping rule needs a 2afc criterion; none is declared under criteria"))
    delta, horizon = stopping.get("delta", 0.05), stopping.get("max_judgements")
    if isinstance(delta, (int, float)) and (horizon is None or isinstance(horizon, int)):  # else: a schema problem
        tuned = stopping.get("tuned_for")
        for message in rule_problems(str(stopping.get("rule", "anytime")), float(delta), horizon,
                                     tuned if isinstance(tuned, int) else None):
            field, text = message.split(": ", 1)
            problems.append((tuple(field.split(".")), text))
    goal = stopping.get("goal")
    return problems + goal_problems(goal if isinstance(goal, str) else None, [str(s) for s in _list(stopping.get("systems"))],
                                    systems, top=stopping.get("top"), rule=str(stopping.get("rule", "anytime")),
                                    known=known, spelled=spelled_as_data or (), pooling=stopping.get("pooling") is True)


def _platform_problems(raw: Any) -> list[Problem]:
    """A study on a platform that marks a submission complete by its code must show that code (Prolific's: a study
    created in Prolific's own web app would otherwise end with no code; ``humeval prolific create`` refuses it too)."""
    kind = _get(raw, "platform", "kind")
    why = PLATFORMS.get(kind).completion_code_required if isinstance(kind, str) and kind in PLATFORMS else ""
    if not why or str(_get(raw, "platform", "completion_code", default="") or ""):
        return []
    return [(("platform", "completion_code"), f"required with platform.kind '{kind}': {why}")]


def check_protocol(protocol: Protocol, systems: list[str] | None = None) -> list[str]:
    """Cross-reference problems of a parsed protocol, as ``field.path: message`` (empty list: none).

    ``systems``: the systems in the data when the protocol lists none.
    """
    raw = protocol.model_dump(mode="json")
    return [f"{format_path(loc)}: {msg}" for loc, msg in cross_references(raw, systems) + feed_problems(protocol)]


def validate_study(study: StudyLike) -> list[str]:
    """Run every check in :data:`CHECKS`; return all problems (empty list: the study is valid)."""
    study = as_study(study)
    from humeval.data.columns import check_output_columns

    source = str(study.protocol_file)
    try:
        raw, node = read_yaml(study.protocol_file, strict=False)
    except ProtocolError as exc:
        return exc.problems
    problems = duplicate_keys(node, source)

    def located(items: list[Problem]) -> list[str]:
        out = []
        for loc, msg in items:
            line = line_of(node, loc)
            out.append(f"{source}:{line}: {format_path(loc)}: {msg}" if line else f"{source}: {format_path(loc)}: {msg}")
        return out

    try:
        protocol = parse_protocol(raw, source=source, node=node)
    except ProtocolError as exc:
        return problems + exc.problems + _raw_file_problems(raw, node, study.root, source) + located(
            cross_references(raw, None) + _arena_problems(raw, study.root))
    outputs, data_systems, data_problems, pairing_error = _read_outputs(protocol, study.root)
    missing = [str(study.root / f) for f in protocol.data.files if not (study.root / f).is_file()]
    if missing:  # reported at their line in data.files, with the files that are there
        data_problems = [*_raw_file_problems(raw, node, study.root, source),
                         *(p for p in data_problems if not any(f"{m}: data file not found" in p for m in missing))]
    problems += located(cross_references(raw, None if data_problems else data_systems) + feed_problems(protocol)
                        + _arena_problems(raw, study.root))
    problems += data_problems
    if not data_problems:
        if pairing_error:
            return [*problems, pairing_error]
        problems += check_output_columns(outputs, protocol, declared_systems=False)  # reported at their line above
        problems += _judge_file_problems(protocol, study.root, outputs)
        if not problems:
            errors, _ = _session_problems(study, protocol, outputs)
            problems += located(errors)
    return problems


def _read_outputs(protocol: Protocol, root: Path) -> tuple[OutputColumns, list[str], list[str], str]:
    """The data's columns (as pairs with ``sampling.pairing``), the systems of the data files, the
    problems of reading them, and why pairs could not be built ("" when they could).

    JSONL files are read without pandas (a small study validates at once); other files, and
    pair construction, with pandas.
    """
    from humeval.data.columns import OutputColumns, read_output_columns

    light = read_output_columns(protocol, root)
    if light is not None:
        return light[0], light[0].systems, light[1], ""
    from humeval.data.outputs import paired, read_outputs

    outputs, problems = read_outputs(protocol.data, protocol.systems, root)
    systems = OutputColumns.of(outputs).systems if not problems else []
    if not problems:
        try:
            outputs = paired(outputs, protocol)
        except HumevalError as exc:
            return OutputColumns.of(outputs), systems, problems, str(exc)
    return OutputColumns.of(outputs), systems, problems, ""


def study_warnings(study: StudyLike) -> list[str]:
    """Settings that are valid but have no effect (printed by ``humeval validate``; they do not fail it)."""
    study = as_study(study)
    source = str(study.protocol_file)
    try:
        raw, node = read_yaml(study.protocol_file, strict=False)
        protocol = parse_protocol(raw, source=source, node=node)
    except ProtocolError:
        return []
    _, warned = _session_problems(study, protocol, None)
    warned += _esa_warnings(protocol) + _qualification_warnings(protocol)
    out = []
    for loc, msg in warned:
        line = line_of(node, loc)
        out.append(f"{source}:{line}: {format_path(loc)}: {msg}" if line else f"{source}: {format_path(loc)}: {msg}")
    return out


def _qualification_warnings(protocol: Protocol) -> list[Problem]:
    """A study that screens out on its qualification with fewer attempts at a check than its platform's policy."""
    from humeval.protocol.platform_kinds import platform_kind

    d, platform = protocol.design, protocol.platform
    kind = platform_kind(platform.kind)
    policy = kind.check_attempts
    screens = any(r.rule == "attention" for r in protocol.exclusion) and bool(platform.screenout_code or platform.screenout_url)
    if policy is None or not d.qualification or d.qualification_attempts >= policy[0] or not screens:
        return []
    return [(("design", "qualification_attempts"), f"{d.qualification_attempts} on {kind.title}, whose policy ({policy[1]}) "
             f"asks for {policy[0]} attempts at a comprehension check before a participant is screened out for "
             f"failing it; set qualification_attempts: {policy[0]}")]


def _esa_warnings(protocol: Protocol) -> list[Problem]:
    """A joint page marks error spans for one ``esa`` criterion: the others get a score and no spans."""
    esa = [c.name for c in protocol.criteria if c.task.marks_spans]
    if protocol.presentation.setup != "joint" or len(esa) < 2:
        return []
    return [(("presentation", "setup"), f"'joint' with {len(esa)} esa criteria ({', '.join(esa)}): a page marks "
             f"error spans for the first ('{esa[0]}') only, and the others get a score without spans; use "
             "'separate' for one esa criterion a page")]


def _watched_lists(study: StudyFolder, protocol: Protocol, outputs: OutputColumns | None) -> tuple[int, int, str] | None:
    """(lists, lists holding a watched pair task, where counted): from lists/lists.jsonl, else the design
    rebuilt with every item selected (``outputs`` needed), else None."""
    from humeval.costs import watched_per_list

    if study.lists_file.is_file():
        lists, source = study.read_lists(), "lists/lists.jsonl"
    elif outputs is not None:
        from humeval.design.lists import design_lists

        items = outputs.items
        systems = list(protocol.systems) or outputs.systems
        selected = items[: max(1, math.ceil(protocol.sampling.rate * len(items)))]
        lists = design_lists(protocol, selected, systems)[3]
        source = f"estimated from the design with {len(selected)} items; run `humeval design` to count"
    else:
        return None
    found = watched_per_list(study, lists)
    if found is None:
        return None
    return len(lists), sum(1 for k in found[1] if k > 0), source


def _session_problems(study: StudyFolder, protocol: Protocol, outputs: OutputColumns | None) -> tuple[list[Problem], list[Problem]]:
    """Sessions that cannot work (errors) and session settings without effect (warnings)."""
    errors: list[Problem] = []
    warned: list[Problem] = []
    stopping, crowd = protocol.stopping, protocol.crowd
    if "wave" in crowd.model_fields_set and "recruit" not in platform_of(protocol.platform.kind).operations():
        warned.append((("crowd", "wave"), f"has no effect on platform '{protocol.platform.kind}': waves open places "
                       f"on {' and '.join(_recruiting())} only"))
    if stopping is None:
        return errors, warned
    strategy = protocol.assignment.strategy
    if strategy != "list":
        if "sessions" in stopping.model_fields_set:
            warned.append((("stopping", "sessions"), f"has no effect with assignment.strategy '{strategy}': sessions "
                           "(whole participant lists) are admitted with the 'list' strategy only"))
        return errors, warned
    try:
        counted = _watched_lists(study, protocol, outputs)
    except HumevalError:
        return errors, warned  # the design cannot be built: the stage reports why
    if counted is None:
        return errors, warned
    lists, watched, source = counted
    if watched == 0:
        errors.append((("stopping",), f"no participant list holds a pair task the rule watches ({source}): the rule "
                       "can never decide; check stopping.systems and the 2afc criteria"))
        return errors, warned
    if stopping.sessions > watched:
        errors.append((("stopping", "sessions"), f"{stopping.sessions} sessions at once, but only {watched} lists hold "
                       f"watched pair tasks ({source}): set at most {watched} (default 2)"))
    if crowd.wave > lists:
        errors.append((("crowd", "wave"), f"waves of {crowd.wave} places, but the design has {lists} lists ({source}): "
                       f"set at most {lists}"))
    return errors, warned


def _judge_file_problems(protocol: Protocol, root: Path, outputs: OutputColumns) -> list[str]:
    """Each declared judge's file read and checked against the outputs (every problem, one per judge)."""
    if not protocol.data.judges:
        return []
    from humeval.data.judges import read_judge

    items, systems = set(outputs.items), outputs.systems
    problems = []
    for judge in protocol.data.judges:
        if judge.llm is not None:
            from humeval.judging.prompt import template_problems

            problems += template_problems(judge, protocol, root)
            if not (root / judge.file).is_file():
                continue  # `humeval judge` writes it
        try:
            read_judge(judge, root, items, systems)
        except DataError as exc:
            problems.append(str(exc))
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
        f"{source}:{line_of(node, ('data', 'files', i))}: data.files[{i}]: data file not found: {root / str(f)}. "
        f"{_data_files_near(root, str(f))}"
        for i, f in enumerate(files)
        if not (root / str(f)).is_file()
    ]


def _data_files_near(root: Path, name: str) -> str:
    """What a missing data file's folder holds that could be meant (files with a data suffix), as a hint."""
    from humeval.data.readers import SUFFIXES

    folder = (root / name).parent
    present = sorted(p.relative_to(root).as_posix() for p in folder.glob("*") if p.suffix.lower() in SUFFIXES) \
        if folder.is_dir() else []
    if not present:
        return f"{folder} holds no data file ({', '.join(SUFFIXES)}); data.files are relative to the study folder"
    return did_you_mean(name, present)
