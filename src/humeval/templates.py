"""``humeval init``: example studies with a small generated data set that validate and run."""

from __future__ import annotations

from pathlib import Path

from humeval.errors import HumevalError, did_you_mean
from humeval.protocol.load import PROTOCOL_FILE
from humeval.rng import as_generator

__all__ = ["TEMPLATES", "generate_outputs", "init_study"]

_HEADER = """\
# humeval study protocol: the single source of truth of this study.
# Everything is declared here before any response is seen; `humeval lock` pins it by hash.
# Field reference: docs/protocol.md (or `humeval schema` for the JSON Schema).
version: 1

study:
  name: {name}
  description: {description}
  seed: {seed}                 # master seed: every random step derives from it

data:
  files: [data/outputs.jsonl]  # JSONL, CSV or Parquet; long layout: one row per (item, system)
  layout: long
  properties: [slots]          # item properties available for stratified sampling
"""

_PAIRWISE = """
systems: [baseline, candidate]

criteria:
  - name: quality
    type: 2afc                 # two outputs side by side, choose the better
    question: Which description of the restaurant is better?
    definition: A good description mentions every fact in the input, fluently and without repetition.
    tie: true                  # also offer "tie"

presentation:
  setup: separate
  randomise_order: true        # A/B order randomised per participant, stored with each judgement
  instructions: Read the facts, then the two descriptions, and choose the better description.

sampling:
  method: auto                 # every item at rate 1; below it stratified by data.properties (random without)
  rate: 1.0

design:
  judgements_per_item: 3
  items_per_participant: 10
  counterbalancing: latin-square
  attention_checks: 1

assignment:
  strategy: list               # list | one | fixed | majority | max3

stopping:                      # dynamic stopping: stop collecting once the rule decides
  rule: anytime                # anytime-valid: P(ever deciding wrongly) <= delta
  delta: 0.05
  systems: [baseline, candidate]
  sessions: 2                  # W = 2: one paid session (list) more in progress than the rule can surely use; 1 never
                               # overshoots but is slow; 2 costs ~0.5 judgements more and brings the wall time from
                               # 1.6x to 1.1x the fixed design's (9 lists, p = 0.75, 3 arrivals per session)

crowd:                         # planning only: `humeval budget` predicts places, money and wall time from it
  arrivals_per_hour: 45        # an example (3 participants per 4-minute session): measure your platform's

pay:                           # what a place (one list) costs: `humeval budget` prints rewards, fee and total
  currency: GBP
  hourly: 9.00
  seconds_per_task: 20         # an estimate until a rehearsal or pilot measures it (11 tasks: 4 minutes a list)

exclusion:
  - rule: attention            # the checks ask for A or B, balanced over the study (seeded)
    max_failures: 0
  - rule: same-side            # the output shown first (or second) chosen in every pair task of a list (8 with
    min_tasks: 8               # 24 items): an honest participant does so with probability ~2 x 0.5^8 = 0.8 %

analysis:
  alpha: 0.05
  agreement: [fleiss, krippendorff]
  rankings: [bradley-terry]

platform:
  kind: local
"""

_RATING = """
systems: [baseline, candidate, reference]

criteria:
  - name: fluency
    type: likert
    question: How fluent is this description?
    definition: Fluent text reads naturally and is grammatical.
    points: 5
    labels: [very poor, very good]
  - name: adequacy
    type: likert
    question: How well does the description convey the facts?
    definition: An adequate description mentions every fact and adds none.
    points: 5
    labels: [very poor, very good]

presentation:
  setup: separate              # one task per criterion (RankME's recommendation)
  instructions: Read the facts, then rate the description.

sampling:
  method: auto                 # every item at rate 1; below it stratified by data.properties (random without)
  rate: 1.0

design:
  judgements_per_item: 3
  items_per_participant: 12
  counterbalancing: latin-square

exclusion:
  - rule: straight-lining      # same score for every task
    min_tasks: 5

analysis:
  alpha: 0.05
  tests: auto                  # Shapiro-Wilk decides parametric or non-parametric
  correction: holm
  agreement: [krippendorff]
  rankings: [mean, bootstrap]

dry_run:
  static: {baseline: 2, candidate: 3, reference: 4}
  sd: 1.0

platform:
  kind: local
"""

_RANKME = """
systems: [baseline, candidate, reference]

criteria:
  - name: naturalness
    type: rankme               # all outputs of an item side by side, each scored against the standard
    question: How natural does each description sound, compared to the standard?
    definition: Could a native speaker have written it?
    standard:
      text: Loch Fyne is a family friendly restaurant serving French food.
    modulus: 100
  - name: informativeness
    type: rankme
    question: How informative is each description, compared to the standard?
    definition: Does it convey all the facts of the input?
    standard:
      text: Loch Fyne is a family friendly restaurant serving French food.
    modulus: 100

presentation:
  setup: separate

sampling:
  method: auto                 # every item at rate 1; below it stratified by data.properties (random without)
  rate: 1.0

design:
  judgements_per_item: 3
  items_per_participant: 8
  counterbalancing: latin-square

analysis:
  agreement: [icc]
  log_magnitude: true          # ME scores are log-transformed before averaging and ICC
  rankings: [bootstrap, trueskill]

platform:
  kind: local
"""

_DEMO = """
systems: [baseline, candidate, reference]

criteria:                      # separate tasks: one pairwise criterion, two RankME criteria
  - name: preference
    type: 2afc                 # two outputs side by side, choose the better
    question: Which description of the restaurant is better?
    definition: A good description mentions every fact in the input, fluently and without repetition.
  - name: naturalness
    type: rankme               # all three outputs of an item side by side, each scored against the standard
    question: How natural does each description sound, compared to the standard?
    definition: Could a native speaker have written it?
    standard:
      text: Loch Fyne is a family friendly restaurant serving French food.
    modulus: 100
  - name: informativeness
    type: rankme
    question: How informative is each description, compared to the standard?
    definition: Does it convey all the facts of the input?
    standard:
      text: Loch Fyne is a family friendly restaurant serving French food.
    modulus: 100

presentation:
  setup: separate              # one task per criterion (RankME's recommendation)
  randomise_order: true
  instructions: Read the facts, then judge the descriptions as each task asks.

sampling:
  method: auto                 # every item at rate 1; below it the recommended `balanced` sampler
  rate: 1.0

design:
  judgements_per_item: 3       # the fixed design: 3 judgements of every task
  items_per_participant: 10
  counterbalancing: latin-square
  attention_checks: 1

stopping:                      # pairwise tasks are served only until the rule decides
  rule: anytime                # anytime-valid: P(ever deciding wrongly) <= delta
  delta: 0.05
  systems: [baseline, reference]    # the pair the 2afc criterion compares (the rule watches two systems)
  sessions: 2                  # W = 2: one paid session more in progress than the rule can surely use: ~2 judgements
                               # more than 1 and cuts the wall time by ~30% (45 lists of 3-4 pair tasks)

crowd:                         # planning only: `humeval budget` predicts places, money and wall time from it
  arrivals_per_hour: 45        # an example (3 participants per 4-minute session): measure your platform's

exclusion:
  - rule: attention
    max_failures: 0

analysis:
  alpha: 0.05
  agreement: [krippendorff, icc]
  log_magnitude: true          # RankME scores are log-transformed before averaging and ICC
  rankings: [bootstrap, bradley-terry]

dry_run:                       # answers of dummy and simulated participants: noise around evenly spaced scores
  sd: 0.6

platform:
  kind: local
"""

TEMPLATES = {
    "pairwise": ("Pairwise comparison of two restaurant-description systems.", _PAIRWISE),
    "rating": ("Likert ratings of three restaurant-description systems.", _RATING),
    "rankme": ("Rank-based magnitude estimation of three systems.", _RANKME),
    "demo": ("Three systems, a pairwise comparison with dynamic stopping and RankME on two criteria.", _DEMO),
}

_NAMES = ["Aromi", "The Eagle", "Zizzi", "Cocum", "The Mill", "Giraffe", "Alimentum", "Bibimbap House"]
_FOODS = ["French", "Italian", "Japanese", "Chinese", "English", "Indian", "fast food"]
_AREAS = ["riverside", "city centre"]
_PRICES = ["cheap", "moderate", "high"]


def generate_outputs(n_items: int, seed: int) -> list[dict]:
    """A small synthetic data-to-text set: restaurant facts and three systems of differing quality."""
    rng = as_generator(seed)
    rows = []
    for i in range(n_items):
        name = _NAMES[rng.integers(len(_NAMES))]
        facts = {"name": name, "food": _FOODS[rng.integers(len(_FOODS))], "area": _AREAS[rng.integers(2)]}
        if rng.random() < 0.5:
            facts["price"] = _PRICES[rng.integers(3)]
        mr = ", ".join(f"{k}[{v}]" for k, v in facts.items())
        price = f" with {facts['price']} prices" if "price" in facts else ""
        reference = f"{name} is a {facts['food']} restaurant in the {facts['area']}{price}."
        candidate = f"In the {facts['area']}, {name} serves {facts['food']} food{price}."
        baseline = f"{name} is a restaurant. {name} is a restaurant in the {facts['area']}."
        item = f"item-{i + 1:04d}"
        for system, text in (("baseline", baseline), ("candidate", candidate), ("reference", reference)):
            rows.append({"item_id": item, "system": system, "output": text, "input": mr, "slots": len(facts)})
    return rows


def init_study(directory: str | Path, template: str = "pairwise", *, items: int = 24, seed: int = 1) -> Path:
    """Write an example study (protocol with comments + generated data) into ``directory``."""
    if template not in TEMPLATES:
        raise HumevalError(f"init: unknown template '{template}'. {did_you_mean(template, TEMPLATES)}")
    if items < 2:
        raise HumevalError(f"init: --items must be at least 2, got {items}")
    root = Path(directory)
    protocol_file = root / PROTOCOL_FILE
    if protocol_file.exists():
        raise HumevalError(f"{protocol_file}: a study already exists here; choose an empty folder")
    from humeval.files import write_jsonl, write_text

    description, body = TEMPLATES[template]
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed))
    header = _HEADER.format(name=root.resolve().name or "study", description=description, seed=seed)
    write_text(protocol_file, header + body)
    return protocol_file
