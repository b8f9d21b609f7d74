from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sampling_frames import make_frame

from humeval.errors import DataError, ProtocolError
from humeval.sampling import SAMPLERS, ItemTable, check_rate, get_sampler, run_phases, sample_size
from humeval.sampling.casf import split_phases
from humeval.sampling.systematic import systematic_positions

METHODS = sorted(SAMPLERS)
#: casf-faithful keeps the authors' floor(size / phases) items per phase (tests/unit/sampling/test_faithful.py),
#: so it is not held to exactly n items
EXACT_SIZE = [m for m in METHODS if m != "casf-faithful"]


@pytest.fixture(scope="module")
def table() -> ItemTable:
    return ItemTable.from_long(make_frame(n_items=60))


@pytest.mark.parametrize("method", METHODS)
def test_exact_size_distinct_and_reproducible(table, method):
    sampler = get_sampler(method)
    size = sample_size(table.n_items, 0.5)
    first = sampler.select(table, size, seed=11)
    again = sampler.select(table, size, seed=11)
    assert len(first.item_ids) == size == len(set(first.item_ids))
    assert first == again
    assert set(first.item_ids) <= set(table.item_ids)


@pytest.mark.parametrize("method", ["random", "stratified", "heuristic", "balanced", "systematic"])
def test_randomised_methods_depend_on_the_seed(table, method):
    sampler = get_sampler(method)
    picks = {tuple(sampler.select(table, 20, seed=s).item_ids) for s in range(5)}
    assert len(picks) > 1


def test_casf_runs_five_phases_of_ten_percent(table):
    selection = get_sampler("casf").select(table, 30, seed=0)
    assert [selection.phases.count(p) for p in range(5)] == [6, 6, 6, 6, 6]
    assert selection.phases == sorted(selection.phases)


def test_casf_uses_new_predictions_each_phase(table):
    """Phase t of CASF depends on the human scores of phases < t (the learner is refit)."""
    sampler = get_sampler("casf", phases=3)
    table2 = ItemTable(table.item_ids, table.systems, table.outputs, table.metrics,
                       {k: v[:, ::-1].copy() * -1 for k, v in table.human.items()}, table.properties)
    a = sampler.select(table, 30, seed=0)
    b = sampler.select(table2, 30, seed=0)
    assert a.item_ids[:10] == b.item_ids[:10]  # preliminary: metrics only
    assert a.item_ids[10:] != b.item_ids[10:]


def test_preliminary_phase_is_systematic_over_the_metric(table):
    sm = get_sampler("sm", metric="m0")
    picks = table.index_of(sm.select(table, 10, seed=0).item_ids)
    quality = table.metrics["auto.m0"].sum(axis=1)
    order = np.argsort(-quality, kind="stable")
    assert list(picks) == list(order[np.arange(10) * 6])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), method=st.sampled_from(EXACT_SIZE), seed=st.integers(0, 2**16))
def test_never_a_duplicate_or_wrong_size(table, n, method, seed):
    sampler = get_sampler(method, phases=min(n, 3)) if method in ("casf", "ol") else get_sampler(method)
    rows, phases = run_phases(sampler, table, n, seed, lambda r: table.scores(table.aspects(), r))
    assert len(rows) == n == len(np.unique(rows)) and len(phases) == n


@pytest.mark.parametrize("rate", [0, -0.1, 1.0001, float("nan"), True])
def test_rate_outside_unit_interval_is_refused(rate):
    with pytest.raises(DataError, match=r"must be in \(0, 1\], got"):
        check_rate(rate)
    with pytest.raises(DataError):
        sample_size(10, rate)


def test_fewer_items_than_phases_is_refused():
    with pytest.raises(DataError, match=r"3 selected item\(s\) cannot be split into 5 phases"):
        split_phases(3, 5, 100)
    with pytest.raises(DataError, match=r"4 item\(s\) cannot fill 5 phases"):
        split_phases(4, 5, 4)


def test_unknown_sampler_and_parameter_are_named():
    with pytest.raises(ProtocolError, match="unknown sampler 'casff'. Did you mean 'casf'"):
        get_sampler("casff")
    with pytest.raises(ProtocolError, match="has no parameter 'phase'. Did you mean 'phases'"):
        get_sampler("casf", phase=3)


def test_unknown_metric_column_in_params(table):
    with pytest.raises(DataError, match=r"unknown metric column 'mover_score'"):
        get_sampler("sm", metric="mover_score").select(table, 10, seed=0)


def test_systematic_positions_one_per_interval():
    pos = systematic_positions(100, 7, 3.2)
    step = 100 / 7
    assert list(pos // step) == list(range(7))


def test_stratified_equal_allocation_balances_topics(table):
    sel = get_sampler("stratified", by=["topic"], allocation="equal").select(table, 20, seed=3)
    topics = table.properties["topic"].to_numpy()[table.index_of(sel.item_ids)]
    assert (topics == "news").sum() == 10


def test_heuristic_takes_mostly_typical_lengths():
    frame = make_frame(n_items=60)
    frame["output"] = [" ".join(["w"] * (1 + int(i[1:]))) for i in frame["item_id"]]  # item k has k+1 words
    table = ItemTable.from_long(frame)
    typical = get_sampler("heuristic", extreme_share=0.0, extreme_quantile=0.2)
    ranks = np.array([int(i[1:]) for i in typical.select(table, 20, seed=0).item_ids])
    assert ((ranks >= 12) & (ranks < 48)).all()
    mixed = get_sampler("heuristic", extreme_share=0.5, extreme_quantile=0.2)
    ranks = np.array([int(i[1:]) for i in mixed.select(table, 20, seed=0).item_ids])
    assert ((ranks < 12) | (ranks >= 48)).sum() == 10


def test_auto_is_the_default_method_and_stage_keys_are_not_sampler_params():
    from humeval.sampling import DEFAULT_METHOD

    sampler = get_sampler("auto", scores_file="scores.csv", metrics="stored")
    assert sampler.name == DEFAULT_METHOD == "random"


def test_auto_means_every_item_at_rate_one_and_the_default_below():
    from humeval.sampling import DEFAULT_METHOD, resolve_method

    assert resolve_method("auto", 1.0) == "all"
    assert resolve_method("auto", 0.5) == DEFAULT_METHOD == "random"
    assert resolve_method("auto", 0.5, ["slots"]) == "stratified"  # by the declared item properties
    assert resolve_method("casf", 0.5) == "casf"


def test_auto_below_rate_one_stratifies_by_the_declared_properties(tmp_path):
    import yaml

    from humeval import init_study, logbook, run_stage
    from humeval.study import StudyFolder

    init_study(tmp_path / "s", "rating", items=40)  # declares data.properties: [slots]
    path = tmp_path / "s" / "humeval.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["sampling"] = {"method": "auto", "rate": 0.5}
    path.write_text(yaml.safe_dump(doc))
    study = StudyFolder.open(tmp_path / "s")
    run_stage(study, "sample")
    entry = [e for e in logbook.read(study) if e["stage"] == "sample"][-1]
    assert entry["parameters"]["method"] == "stratified" and entry["parameters"]["params"]["by"] == ["slots"]
