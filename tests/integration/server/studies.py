"""Example studies written for the server tests (protocol YAML + generated data + lists)."""

from __future__ import annotations

from pathlib import Path

from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.study import StudyFolder
from humeval.templates import generate_outputs, init_study

ALL_TYPES = """
version: 1
study: {{name: all-types, description: Every response type, seed: 3}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate, reference]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
  - {{name: fluency, type: likert, question: "How fluent is it?", points: 5, labels: [bad, good]}}
  - name: naturalness
    type: magnitude
    question: "How natural is it?"
    standard: {{text: Aromi is a restaurant., input: "name[Aromi]"}}
    modulus: 100
  - name: overall
    type: rankme
    question: "How good is each output?"
    standard: {{text: Aromi is a restaurant.}}
    modulus: 100
  - {{name: adequacy, type: slider, question: "How adequate is it?", min: 0, max: 100, low_label: poor, high_label: perfect}}
presentation:
  setup: separate
  randomise_order: true
  instructions: Read each output and answer the question.
  consent: I agree that my answers are stored for research.
design: {{judgements_per_item: 1, items_per_participant: 100, counterbalancing: none}}
platform: {{kind: prolific, completion_code: {code}}}
"""

PAIRWISE = """
version: 1
study: {{name: pairwise, seed: 5}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
presentation: {{setup: separate}}
design: {{judgements_per_item: {per_item}, items_per_participant: {per_participant}, counterbalancing: latin-square}}
assignment: {{strategy: {strategy}, workers: 3{lease}}}
{stopping}
platform: {{kind: local, completion_code: DONE-42}}
{pay}"""

SCRIPT = "<script>window.__pwned = 1</script><b>bold</b> & more"


def all_types_study(root: Path, *, items: int = 2, code: str = "C0DE-777") -> StudyFolder:
    """Every task type, one list holding every task; one output contains a script tag."""
    rows = generate_outputs(items, seed=3)
    rows[0]["output"] = SCRIPT
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    (root / "humeval.yaml").write_text(ALL_TYPES.format(code=code), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)  # collection refuses an unlocked study
    return study


def pairwise_study(
    root: Path, *, items: int = 30, strategy: str = "list", per_item: int = 3, per_participant: int = 10,
    stopping: bool = True, delta: float = 0.05, lease: int | None = 1800, exclusion: str = "",
    min_in_flight: int = 1, seconds_per_task: float | None = None,
) -> StudyFolder:
    """A two-system ``2afc`` study; ``exclusion``: the protocol's ``exclusion`` list in YAML flow style; ``lease``
    None: derived from the declared time (``seconds_per_task``, as ``pay.seconds_per_task``)."""
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=5))
    stop = (f"stopping: {{rule: anytime, delta: {delta}, systems: [baseline, candidate], min_in_flight: {min_in_flight}}}"
            if stopping else "")
    if exclusion:
        stop += f"\nexclusion: {exclusion}"
    (root / "humeval.yaml").write_text(
        PAIRWISE.format(strategy=strategy, per_item=per_item, per_participant=per_participant, stopping=stop,
                        lease="" if lease is None else f", lease_seconds: {lease}",
                        pay="" if seconds_per_task is None else f"pay: {{seconds_per_task: {seconds_per_task}}}\n"),
        encoding="utf-8",
    )
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)  # collection refuses an unlocked study
    return study


def template_study(root: Path, template: str, items: int) -> StudyFolder:
    init_study(root, template, items=items)
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)  # collection refuses an unlocked study
    return study


RENDERING = """
version: 1
study: {{name: rendering, seed: 4}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "{question}", tie: true}}
presentation:
  setup: separate
  output_format: markdown
  comments: {comments}
  language: {language}
  title: "{title}"
  instructions: "{instructions}"
design: {{judgements_per_item: 1, items_per_participant: 2, counterbalancing: none}}
platform: {{kind: local, completion_code: DONE-7}}
"""
MARKDOWN = ("Here is **bold** text.\n\n```python\ndef add(x, y):\n    return x + y\n```\n\n"
            "| system | score |\n|---|---:|\n| A | 1 |\n\n"
            "<script>window.__pwned = 1</script> <img src=x onerror=\"window.__pwned = 2\">")
CONVERSATION = [{"role": "user", "content": "What is 2 + 2?"},
                {"role": "assistant", "content": "It is **4**."}]


def rendering_study(root: Path, *, language: str = "en", items: int = 3, question: str = "Which answer is better?",
                    title: str = "Answers", instructions: str = "Read both answers.", comments: bool = False) -> StudyFolder:
    """Markdown outputs (bold, code, a table, hostile HTML) against conversation outputs (a data column)."""
    rows = []
    for i in range(items):
        rows.append({"item_id": f"item-{i}", "system": "baseline", "output": MARKDOWN, "input": "A question", "slots": 1})
        rows.append({"item_id": f"item-{i}", "system": "candidate", "output": CONVERSATION, "format": "conversation",
                     "input": "A question", "slots": 1})
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    (root / "humeval.yaml").write_text(RENDERING.format(language=language, question=question, title=title,
                                                         instructions=instructions, comments=str(comments).lower()),
                                       encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


ESA = """
version: 1
study: {{name: esa, seed: 6}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate, reference]
criteria:
  - {{name: quality, type: esa, question: "Mark the errors, then score the translation."{esa_extra}}}
{criteria_extra}presentation: {{setup: {setup}, title: Translations, language: {language}}}
design: {{judgements_per_item: {per_item}, items_per_participant: {per_participant}, counterbalancing: none}}
analysis: {{bootstrap: 100}}
dry_run: {{static: {{baseline: 40, candidate: 60, reference: 85}}}}
platform: {{kind: local, completion_code: DONE-ESA}}
"""


def esa_study(root: Path, *, items: int = 8, per_item: int = 2, per_participant: int = 6, language: str = "en",
              outputs: list[dict] | None = None, setup: str = "separate", criteria_extra: str = "",
              esa_extra: str = "") -> StudyFolder:
    """Error span annotation of three systems' outputs (every output judged ``per_item`` times);
    ``outputs`` replaces the generated data set (rows of ``item_id, system, output, slots``, optionally
    ``format``); ``criteria_extra`` adds criteria (YAML list lines), ``esa_extra`` fields of the esa one."""
    write_jsonl(root / "data" / "outputs.jsonl", outputs if outputs is not None else generate_outputs(items, seed=6))
    (root / "humeval.yaml").write_text(ESA.format(per_item=per_item, per_participant=per_participant,
                                                  language=language, setup=setup, criteria_extra=criteria_extra,
                                                  esa_extra=esa_extra), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


SHAPED = """
version: 1
study: {name: shaped, seed: 8}
data: {files: [data/outputs.jsonl], properties: [slots]}
systems: [m11, m23]
criteria:
  - name: coherence
    type: likert
    points: 5
    question: "How well does the summary keep to the article's main points, in an order that a reader who has not seen the article can follow from its first sentence to its last (see https://example.org/guidelines/summarisation/coherence-and-ordering-of-main-points)?"
  - {name: preference, type: 2afc, question: "Which summary is better?"}
presentation:
  setup: separate
  input_heading: Article
  output_labels: [Summary A, Summary B]
design: {judgements_per_item: 1, items_per_participant: 4, counterbalancing: none}
platform: {kind: local, completion_code: DONE-8}
"""

ARTICLE = " ".join(["The council voted on Tuesday to extend the city's tram line to the northern districts, a plan "
                    "first proposed a decade ago and delayed twice by the cost of the bridge it needs."] * 12)


def shaped_study(root: Path, *, labels: str = "[Summary A, Summary B]") -> StudyFolder:
    """A summarisation study shaped by its presentation fields: the input headed "Article" in the page's font, the
    outputs labelled, a long Likert question; a Likert task shows one output (labelled with the first label)."""
    rows = [{"item_id": f"doc-{i}", "system": s, "input": ARTICLE, "slots": 1,
             "output": f"The council extended the tram line north ({s}, {i})."} for i in range(4) for s in ("m11", "m23")]
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    (root / "humeval.yaml").write_text(SHAPED.replace("[Summary A, Summary B]", labels), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


ARENA = """
version: 1
study: {{name: arena, seed: 11}}
data: {{files: [data/outputs.jsonl]}}
systems: [{systems}]
criteria:
  - {{name: vote, type: battle, question: "Which answer is better?"}}
presentation: {{setup: separate, input_heading: Prompt, output_labels: [Model A, Model B], output_format: markdown}}
design: {{judgements_per_item: {judgements_per_item}, items_per_participant: {per_participant}, counterbalancing: none}}
platform: {{kind: local, completion_code: DONE-ARENA}}
{arena}"""
#: three LLMFAO models with a recorded, non-empty answer to each of the 19 prompts
ARENA_MODELS = ("GPT 4", "Claude v2", "LLaMA-2-Chat (13B)")


def arena_study(root: Path, data: Path, *, models: tuple[str, ...] = ARENA_MODELS, prompts: list[str] | None = None,
                per_participant: int = 6, arena: str = "", judgements_per_item: int = 1) -> StudyFolder:
    """An arena study on recorded outputs: LLMFAO's prompts are the items, its models the systems, each battle a
    ``battle`` criterion (``data``: the folder of ``llmfao-*.jsonl``; ``arena``: the protocol's arena section, YAML)."""
    from humeval.data.llmfao import llmfao_outputs

    outputs = llmfao_outputs(data, models=models, prompts=prompts)
    write_jsonl(root / "data" / "outputs.jsonl", outputs.to_dict(orient="records"))
    systems = ", ".join(f'"{m}"' for m in models)
    (root / "humeval.yaml").write_text(ARENA.format(systems=systems, per_participant=per_participant, arena=arena,
                                                   judgements_per_item=judgements_per_item), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


#: LLMFAO models as a live arena names them (a model's name: letters, digits and ``_.:/@+-``), with their names in
#: LLMFAO's results; the last one's answers are cut at 20 characters, so that every battle it is in fails
LIVE_MODELS = {"gpt-4": "GPT 4", "claude-v2": "Claude v2", "llama-2-13b": "LLaMA-2-Chat (13B)"}
LIVE = """
version: 1
study: {{name: live-arena, seed: 12}}
data: {{files: [data/prompts.jsonl]}}
systems: [{systems}]
criteria:
  - {{name: vote, type: battle, question: "Which answer is better?"}}
presentation: {{setup: separate, input_heading: Prompt, output_labels: [Model A, Model B], language: {language}}}
design: {{judgements_per_item: {per_item}, items_per_participant: {per_participant}, counterbalancing: none}}
platform: {{kind: {platform}, completion_code: DONE-LIVE}}
arena:
  reveal: {reveal}
  limits: {{first_token_seconds: 10, total_seconds: 30}}
{prompt_rules}  models:
{models}"""


def live_arena_study(root: Path, data: Path, *, prompts: int = 3, per_participant: int = 6, failing: str = "",
                     reveal: bool = False, platform: str = "local", chunk_seconds: float = 0.0,
                     naming: str = "", spare: int = 0, prompt_rules: str = "", language: str = "en",
                     lock: bool = True, per_item: int = 1, models: dict[str, str] | None = None,
                     items: list[str] | None = None) -> StudyFolder:
    """A live arena over LLMFAO's first ``prompts`` prompts: its items are prompts only (no outputs), its models
    ``recorded`` endpoints that stream LLMFAO's recorded answers in pieces of 40 characters when a battle is served;
    ``failing``: one more model (a key of :data:`LIVE_MODELS`'s LLMFAO names, e.g. ``Alpaca (7B)``) named
    ``failing`` whose answers break ``max_chars: 20``; ``naming``: a model whose answers begin "I am ChatGPT." (the
    identity filter drops its battles); ``spare``: that many further LLMFAO prompts whose recorded answers the table
    holds but which are no item (the prompts to type, or of the prompt file ``spare-prompts.jsonl``: ``id``, ``text``);
    ``prompt_rules``: the flow mapping of ``arena.prompts``; ``language``: ``presentation.language``; ``lock``:
    locked (else only designed); ``per_item``: ``design.judgements_per_item``; ``models``: the arena's models (its
    names to LLMFAO's; default :data:`LIVE_MODELS`); ``items``: LLMFAO's prompts (slugs) to take first, before the
    others in order."""
    from humeval.data.llmfao import llmfao_outputs

    names = dict(models or LIVE_MODELS) | ({"failing": failing} if failing else {})
    recorded = llmfao_outputs(data, models=list(names.values()))
    common = set.intersection(*(set(recorded.loc[recorded["system"] == m, "item_id"]) for m in names.values()))
    items = list(items) + sorted(common - set(items)) if items is not None else sorted(common)
    recorded = recorded[recorded["item_id"].isin(items[:prompts + spare])]
    back = {v: k for k, v in names.items()}
    rows = [{"item_id": r.item_id, "system": back[r.system], "output": "", "input": r.input} for r in recorded.itertuples()
            if r.item_id in items[:prompts]]
    spares = recorded[recorded["item_id"].isin(items[prompts:prompts + spare])].drop_duplicates("item_id")
    write_jsonl(root / "spare-prompts.jsonl", [{"id": r.item_id, "text": r.input} for r in spares.itertuples()])
    write_jsonl(root / "data" / "prompts.jsonl", rows)
    write_jsonl(root / "recorded.jsonl", [
        {"model": back[r.system], "prompt": r.input,
         "output": ("I am ChatGPT. " if back[r.system] == naming else "") + r.output} for r in recorded.itertuples()])
    models = "".join(
        f"    - {{name: {n}, kind: recorded, table: recorded.jsonl, chunk_chars: 40, chunk_seconds: {chunk_seconds}"
        + (", limits: {max_chars: 20, first_token_seconds: 10, total_seconds: 30}" if n == "failing" else "") + "}\n"
        for n in names)
    (root / "humeval.yaml").write_text(LIVE.format(systems=", ".join(names), per_participant=per_participant, per_item=per_item,
                                                   reveal=str(reveal).lower(), models=models, platform=platform,
                                                   prompt_rules=f"  prompts: {prompt_rules}\n" if prompt_rules else "",
                                                   language=language),
                                       encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    if lock:
        lock_study(study)
    return study
