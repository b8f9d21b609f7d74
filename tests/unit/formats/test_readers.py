"""Readers for the files users have: FastChat battle arrays and arena Parquet, WMT MQM TSV, Label Studio and
Argilla exports, SummEval JSONL, Hugging Face save_to_disk folders; each on a sample in the tool's own layout."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from humeval.data.battles import battles_to_judgements
from humeval.data.readers import read_table
from humeval.design.tasks import Task
from humeval.errors import DataError
from humeval.formats.annotation_exports import read_argilla, read_label_studio
from humeval.formats.external import match_tasks, read_judgement_file
from humeval.formats.hf import dataset_frame, dataset_judgements, dataset_outputs
from humeval.formats.mqm import read_mqm
from humeval.formats.summeval import read_summeval
from humeval.stats import bradley_terry, read_battles

SAMPLES = Path(__file__).parent / "samples"


def _fastchat_battles() -> list[dict]:
    """Battles as FastChat's clean_battle_data.py keeps them (its field names and value types)."""
    winners = ["model_a", "model_b", "tie", "tie (bothbad)", "model_a", "model_a"]
    return [{"question_id": f"q{i}", "model_a": "vicuna-13b" if i % 2 else "gpt-4", "model_b": "gpt-4" if i % 2 else "vicuna-13b",
             "winner": w, "judge": f"arena_user_{i % 3}", "turn": 1, "anony": True, "language": "English",
             "tstamp": 1682351591.1322 + i,
             "conversation_a": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
             "conversation_b": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hey."}],
             "openai_moderation": {"flagged": False}, "toxic_chat_tag": {"roberta-large": {"flagged": False}}}
            for i, w in enumerate(winners)]


def test_fastchat_json_array_written_with_indent_2_is_read(tmp_path: Path) -> None:
    path = tmp_path / "clean_battle_20240101.json"
    with path.open("w") as fout:
        json.dump(_fastchat_battles(), fout, indent=2)  # exactly how clean_battle_data.py writes it
    battles = read_battles(path)
    assert len(battles) == 6 and battles["winner"].tolist()[:4] == ["model_a", "model_b", "tie", "tie (bothbad)"]
    assert battles["judge"].iloc[0] == "arena_user_0" and battles["anony"].all()
    ranking = bradley_terry(battles, n_boot=0)
    assert set(ranking.systems) == {"gpt-4", "vicuna-13b"}
    judged = battles_to_judgements(battles, criterion="preference")
    assert judged["choice"].tolist() == ["A", "B", "tie", "both-bad", "A", "A"]
    assert judged["item_id"].tolist()[0] == "q0" and judged["participant_id"].tolist()[0] == "arena_user_0"
    assert judged["submitted_at"].iloc[0].startswith("2023-04-24T")


def test_arena_parquet_with_conversations_and_both_bad(tmp_path: Path) -> None:
    battles = _fastchat_battles()
    battles[3]["winner"] = "both_bad"  # the newer arena data sets' spelling
    frame = pd.DataFrame(battles).drop(columns=["openai_moderation", "toxic_chat_tag"])
    frame.to_parquet(tmp_path / "arena.parquet", index=False)
    back = read_battles(tmp_path / "arena.parquet")
    assert back["winner"].iloc[3] == "tie (bothbad)" and len(back) == 6
    assert list(back["conversation_a"].iloc[0][1].values()) == ["assistant", "Hello!"]
    # a preference set with one-hot winner columns
    onehot = frame.drop(columns="winner").assign(winner_model_a=[1, 0, 0, 0, 1, 1], winner_model_b=[0, 1, 0, 0, 0, 0],
                                                 winner_tie=[0, 0, 1, 1, 0, 0])
    onehot.to_parquet(tmp_path / "prefs.parquet", index=False)
    assert read_battles(tmp_path / "prefs.parquet")["winner"].tolist() == ["model_a", "model_b", "tie", "tie", "model_a",
                                                                          "model_a"]


def test_broken_battle_files_name_file_battle_and_layout(tmp_path: Path) -> None:
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1\xff\xfe\x00garbage")
    with pytest.raises(DataError, match=r"broken.parquet: cannot read Parquet .*expected an Apache Parquet file"):
        read_battles(bad)
    arr = tmp_path / "battles.json"
    arr.write_text('[\n  {"model_a": "a", "model_b": "b", "winner": "tie"},\n  {"model_a": "a", "model_b": "b",')
    with pytest.raises(DataError, match=r"battles.json:3: broken JSON .*expected a FastChat battle log"):
        read_battles(arr)
    arr.write_text(json.dumps([{"model_a": "a", "model_b": "b", "winner": "tie"}, {"model_a": "a", "winner": "x"}]))
    with pytest.raises(DataError, match=r"battles.json: battle 2: missing field 'model_b'"):
        read_battles(arr)
    arr.write_bytes(b'[{"model_a": "\xff"}]')
    with pytest.raises(DataError, match=r"battles.json:1: byte 0xff is not UTF-8"):
        read_battles(arr)


def test_mqm_tsv_with_its_header() -> None:
    frame = read_mqm(SAMPLES / "mqm_sample.tsv", criterion="mqm")
    frame = frame.set_index(["participant_id", "system", "item_id"])
    assert len(frame) == 4  # (rater1, sysA, 1), (rater1, sysB, 1), (rater2, sysA, 2), (rater2, sysB, 2)
    spans = json.loads(frame.loc[("rater1", "sysA", "1"), "spans"])
    # "Ich möchte euch alle bitten." : "euch" at 11-15, the final "." at 27-28 (offsets without the <v> marks)
    assert [(s["start"], s["end"], s["severity"], s["weight"]) for s in spans] == [(11, 15, "major", 5.0),
                                                                                     (27, 28, "minor", 0.1)]
    assert "Ich möchte euch alle bitten."[11:15] == "euch"
    assert json.loads(frame.loc[("rater1", "sysB", "1"), "spans"]) == []  # No-error
    assert json.loads(frame.loc[("rater2", "sysA", "2"), "spans"]) == []  # Neutral is no error
    nontrans, source = json.loads(frame.loc[("rater2", "sysB", "2"), "spans"])
    assert (nontrans["start"], nontrans["end"], nontrans["weight"]) == (0, len("Sonnenbrand."), 25.0)
    assert (source["start"], source["end"], source["category"]) == (0, 0, "Source error")
    assert frame["criterion"].eq("mqm").all()
    # value: 100 - 4 x the MQM score (5 + 0.1; none; neutral only; 25 + 1 capped at 25)
    assert frame["value"].to_dict() == {("rater1", "sysA", "1"): pytest.approx(100 - 4 * 5.1),
                                        ("rater1", "sysB", "1"): 100.0, ("rater2", "sysA", "2"): 100.0,
                                        ("rater2", "sysB", "2"): 0.0}
    by_doc = read_mqm(SAMPLES / "mqm_sample.tsv", item="doc+seg_id")
    assert set(by_doc["item_id"]) == {"talk.1:1", "talk.1:2"}


def test_broken_mqm_files(tmp_path: Path) -> None:
    text = (SAMPLES / "mqm_sample.tsv").read_text()
    bad = tmp_path / "bad.tsv"
    bad.write_text(text.replace("\tseverity", "\tsev"))
    with pytest.raises(DataError, match=r"bad.tsv:1: missing column\(s\) severity.*expected a WMT MQM TSV"):
        read_mqm(bad)
    bad.write_text(text.replace("\tMajor\t\n", "\tHuge\t\n", 1))
    with pytest.raises(DataError, match=r"bad.tsv:2: severity 'Huge' is not valid"):
        read_mqm(bad)
    bad.write_text(text + "sysA\tonly\tthree\n")
    with pytest.raises(DataError, match=r"bad.tsv:8: 3 tab-separated fields"):
        read_mqm(bad)
    bad.write_bytes(text.encode("utf-16"))  # a byte-order mark names the encoding: read as the UTF-8 file is
    pd.testing.assert_frame_equal(read_mqm(bad), read_mqm(SAMPLES / "mqm_sample.tsv"))
    bad.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataError, match=r"bad.tsv:2: byte 0xf6 is not UTF-8"):
        read_mqm(bad)
    # read as a plain table, the TSV keeps its literal quotes
    assert read_table(SAMPLES / "mqm_sample.tsv")["target"].iloc[2] == 'Ich möchte Sie alle "bitten".'


def test_label_studio_export_with_two_annotators() -> None:
    frame = read_label_studio(SAMPLES / "labelstudio_export.json")
    assert frame.attrs["skipped"] == {"cancelled annotation": 1, "result type 'rectanglelabels'": 1}
    rating = frame[frame["criterion"] == "fluency"].set_index("participant_id")
    assert rating["value"].to_dict() == {"1": 4.0, "rater2@example.org": 2.0}
    assert rating.loc["1", "comment"] == "fine otherwise" and rating.loc["1", "item_id"] == "i1"
    spans = frame[frame["criterion"] == "errors"]
    assert len(spans) == 1 and json.loads(spans["spans"].iloc[0]) == [
        {"start": 4, "end": 9, "severity": "minor"}, {"start": 16, "end": 19, "severity": "major"}]
    pair = frame[frame["criterion"] == "quality"].set_index("participant_id")
    assert pair["choice"].to_dict() == {"1": "B", "rater2@example.org": "A"}
    assert (pair["system"] == "sysA").all() and (pair["system_b"] == "sysB").all()


def test_broken_label_studio_exports(tmp_path: Path) -> None:
    bad = tmp_path / "export.json"
    bad.write_text('{"id": 1}')
    with pytest.raises(DataError, match=r"export.json: the JSON is a dict, not an array; expected a Label Studio"):
        read_label_studio(bad)
    tasks = json.loads((SAMPLES / "labelstudio_export.json").read_text())
    tasks[1]["annotations"][0]["result"][0]["value"]["choices"] = ["maybe"]
    bad.write_text(json.dumps(tasks))
    with pytest.raises(DataError, match=r"task 2, annotation 1, result 1: pairwise answer 'maybe' is not valid"):
        read_label_studio(bad)
    del tasks[0]["data"]["system"]
    bad.write_text(json.dumps(tasks))
    with pytest.raises(DataError, match=r"task 1: data has no field 'system'"):
        read_label_studio(bad)


def test_argilla_flat_export(tmp_path: Path) -> None:
    records = [{"id": "r1", "status": "completed", "_server_id": "5f0c", "item_id": "i1", "system": "sysA",
                "output": "The quick brown fox.", "fluency.responses": [4, 5], "fluency.responses.users": ["u1", "u2"],
                "fluency.responses.status": ["submitted", "submitted"],
                "errors.responses": [[{"start": 4, "end": 9, "label": "Minor"}]], "errors.responses.users": ["u1"],
                "notes.responses": ["nice"], "notes.responses.users": ["u2"]},
               {"id": "r2", "item_id": "i2", "system": "sysA", "system_b": "sysB", "pref.responses": ["B", "tie"],
                "pref.responses.users": ["u1", "u2"]}]
    path = tmp_path / "argilla.json"
    path.write_text(json.dumps(records))
    frame = read_argilla(path)
    assert frame.attrs["skipped"] == {"text answer": 1}
    assert frame[frame["criterion"] == "fluency"]["value"].tolist() == [4.0, 5.0]
    assert json.loads(frame[frame["criterion"] == "errors"]["spans"].iloc[0]) == [{"start": 4, "end": 9, "severity": "minor"}]
    assert frame[frame["criterion"] == "pref"]["choice"].tolist() == ["B", "tie"]
    records[0]["fluency.responses.users"] = ["u1"]
    path.write_text(json.dumps(records))
    with pytest.raises(DataError, match=r"record 1: fluency.responses and fluency.responses.users must be lists of the same"):
        read_argilla(path)


def test_argilla_nested_export_as_records_to_json_writes_it(tmp_path: Path) -> None:
    # Argilla 2.x `dataset.records.to_json(path)`: GenericIO.to_list(records, flatten=False), each record as
    # Record.to_dict() gives it (id, fields, metadata, suggestions, responses {q: [{value, user_id}]}, vectors,
    # _server_id), every record given every key (None where absent)
    records = [{"id": "r1", "fields": {"article": "A long article.", "output": "A summary."},
                "metadata": {"item_id": "i1", "system": "sysA", "system_b": "sysB"},
                "suggestions": {"pref": {"value": "A", "score": 0.9, "agent": "gpt-4"}},
                "responses": {"pref": [{"value": "B", "user_id": "7c1e"}, {"value": "tie", "user_id": "91aa"}],
                              "fluency": [{"value": 4, "user_id": "7c1e"}]},
                "vectors": {}, "_server_id": "5f0c"},
               {"id": "i2", "fields": {"output": "Another."}, "metadata": {"system": "sysA"},
                "suggestions": {}, "responses": {"fluency": [{"value": 2, "user_id": "91aa"}],
                                                "notes": [{"value": "clear", "user_id": "91aa"}]}, "vectors": {},
                "_server_id": None}]
    path = tmp_path / "argilla.json"
    path.write_text(json.dumps(records))
    frame = read_argilla(path)
    assert frame.attrs["skipped"] == {"text answer": 1}  # the free-text answer; suggestions are not judgements
    pref = frame[frame["criterion"] == "pref"]
    assert pref[["participant_id", "item_id", "system", "system_b", "choice"]].values.tolist() == [
        ["7c1e", "i1", "sysA", "sysB", "B"], ["91aa", "i1", "sysA", "sysB", "tie"]]
    fluency = frame[frame["criterion"] == "fluency"]
    assert fluency[["participant_id", "item_id", "value"]].values.tolist() == [["7c1e", "i1", 4.0], ["91aa", "i2", 2.0]]
    records[0]["responses"]["pref"] = [{"user_id": "7c1e"}]
    path.write_text(json.dumps(records))
    with pytest.raises(DataError, match=r"record 1: responses.pref must be a list of \{value, user_id\} objects"):
        read_argilla(path)


def test_label_studio_pairwise_tag(tmp_path: Path) -> None:
    # the Pairwise control (`<Pairwise name="pw" toName="txt-1,txt-2"/>`) stores {"selected": "left"|"right"}
    tasks = [{"id": 1, "data": {"item_id": "i1", "system": "sysA", "system_b": "sysB", "text1": "x", "text2": "y"},
              "annotations": [{"completed_by": 3, "was_cancelled": False, "created_at": "2026-11-30T10:00:00Z",
                               "result": [{"id": "r", "from_name": "pw", "to_name": "txt-1,txt-2", "type": "pairwise",
                                           "origin": "manual", "value": {"selected": side}}]}
                              for side in ("left", "right")]}]
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(tasks))
    frame = read_label_studio(path)
    assert frame[["criterion", "system", "system_b", "choice"]].values.tolist() == [
        ["pw", "sysA", "sysB", "A"], ["pw", "sysA", "sysB", "B"]]
    assert frame.attrs["skipped"] == {}
    tasks[0]["annotations"][0]["result"][0]["value"] = {"selected": "none"}
    path.write_text(json.dumps(tasks))
    with pytest.raises(DataError, match=r"task 1, annotation 1, result 1: a pairwise result needs value.selected"):
        read_label_studio(path)


def test_summeval_jsonl_as_ratings(tmp_path: Path) -> None:
    experts = read_summeval(SAMPLES / "summeval_sample.jsonl")
    assert len(experts) == 2 * 3 * 4 and set(experts["participant_id"]) == {"expert-1", "expert-2", "expert-3"}
    coh = experts[(experts["criterion"] == "coherence") & (experts["system"] == "M13")]
    assert coh["value"].tolist() == [5.0, 3.0, 2.0]
    both = read_summeval(SAMPLES / "summeval_sample.jsonl", annotators="both")
    assert len(both) == 2 * (3 + 5) * 4
    bad = tmp_path / "s.jsonl"
    bad.write_text(json.dumps({"id": "d", "model_id": "M1", "expert_annotations": [{"coherence": "high"}]}) + "\n")
    with pytest.raises(DataError, match=r"s.jsonl:1: expert_annotations\[0\].coherence must be a number, got 'high'"):
        read_summeval(bad)
    bad.write_text(json.dumps({"id": "d", "decoded": "x"}) + "\n")
    with pytest.raises(DataError, match=r"s.jsonl:1: missing field 'model_id'.*expected SummEval JSONL"):
        read_summeval(bad)


def _save_to_disk_folder(folder: Path, frame: pd.DataFrame) -> None:
    """The folder Dataset.save_to_disk writes: Arrow IPC stream shards named in state.json, and dataset_info.json."""
    import pyarrow as pa

    folder.mkdir()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    (folder / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}],
                                                   "_fingerprint": "0123456789abcdef", "_format_columns": None,
                                                   "_format_kwargs": {}, "_format_type": None,
                                                   "_output_all_columns": False, "_split": "train"}))
    (folder / "dataset_info.json").write_text(json.dumps({"citation": "", "description": "", "features": {}}))


def test_hugging_face_dataset_folder_as_outputs_and_judgements(tmp_path: Path) -> None:
    outputs = pd.DataFrame({"id": ["a", "a", "b", "b"], "model": ["x", "y", "x", "y"],
                            "text": ["one", "two", "three", "four"], "refs": [["r1"], ["r1"], ["r2", "r3"], ["r2", "r3"]]})
    _save_to_disk_folder(tmp_path / "outs", outputs)
    long = dataset_outputs(tmp_path / "outs", item_id="id", system="model", output="text", input=None, references="refs")
    assert long[["item_id", "system", "output"]].values.tolist() == [["a", "x", "one"], ["a", "y", "two"],
                                                                     ["b", "x", "three"], ["b", "y", "four"]]
    assert long["references"].tolist()[2] == "r2\nr3"
    judged = pd.DataFrame({"participant_id": ["p1", "p2"], "item_id": ["a", "a"], "criterion": ["q", "q"],
                           "system": ["x", "x"], "value": [3, 4]})
    _save_to_disk_folder(tmp_path / "judged", judged)
    frame = dataset_judgements(tmp_path / "judged")
    assert frame["value"].tolist() == [3.0, 4.0] and frame["kind"].eq("task").all()

    class FakeDataset:  # anything with to_pandas(), as datasets.Dataset
        def to_pandas(self) -> pd.DataFrame:
            return judged

    assert dataset_frame(FakeDataset()).equals(judged)
    # a folder written by datasets 5.2.0 itself (Dataset.from_dict(...).save_to_disk), read without the library
    saved = dataset_outputs(SAMPLES / "hf_save_to_disk", input=None, references="refs")
    assert saved[["item_id", "system", "output", "references"]].values.tolist() == [["a", "x", "one", "r1"],
                                                                                   ["b", "y", "two", "r2\nr3"]]
    with pytest.raises(DataError, match=r"no state.json"):
        dataset_frame(tmp_path)
    (tmp_path / "judged" / "data-00000-of-00001.arrow").write_bytes(b"not arrow")
    with pytest.raises(DataError, match=r"data-00000-of-00001.arrow: not an Arrow stream"):
        dataset_frame(tmp_path / "judged")


def test_external_judgements_join_the_design_tasks() -> None:
    frame = read_judgement_file(SAMPLES / "summeval_sample.jsonl", "summeval")
    doc = "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2"
    tasks = [Task("t1", doc, ("M11",), ("coherence", "fluency"), "f"), Task("t2", doc, ("M13",), ("coherence",), "f"),
             Task("att", doc, ("M11",), ("coherence",), "f", kind="attention")]
    matched, skipped, examples = match_tasks(frame, tasks)
    assert len(matched) == 3 * 2 + 3 and set(matched["task_id"]) == {"t1", "t2"}
    assert skipped["no matching task in the design"] == 24 - 9
    assert "no task of the design shows item" in examples[0]
    with pytest.raises(DataError, match=r"unknown judgement file format 'mqn'. Did you mean 'mqm'"):
        read_judgement_file(SAMPLES / "mqm_sample.tsv", "mqn")
    assert read_judgement_file(SAMPLES / "mqm_sample.tsv", "mqm")["value"].between(0, 100).all()


def test_a_battles_prompt_is_read_back_from_the_first_user_turn_or_its_prompt_field(tmp_path: Path) -> None:
    battles = _fastchat_battles()
    battles[1]["conversation_a"] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"}]
    battles[2]["conversation_a"] = []  # no user turn: the item's own prompt
    array, lines = tmp_path / "clean_battle.json", tmp_path / "battles.jsonl"
    array.write_text(json.dumps(battles, indent=2))
    lines.write_text("\n".join(json.dumps(b) for b in battles))
    for path in (array, lines):  # the conversations are read a battle at a time and dropped
        judged = read_judgement_file(path, "fastchat")
        assert judged["prompt"].tolist() == ["Hi", "Why?", "", "Hi", "Hi", "Hi"]
        assert judged["prompt_source"].tolist() == ["log", "log", "", "log", "log", "log"]
    frame = pd.DataFrame(battles).drop(columns=["openai_moderation", "toxic_chat_tag"])
    frame.to_parquet(tmp_path / "arena.parquet", index=False)  # conversations become arrays of structs
    assert read_battles(tmp_path / "arena.parquet")["prompt"].fillna("").tolist() == ["Hi", "Why?", "", "Hi", "Hi", "Hi"]
    battles[0]["prompt"] = "its own field wins"
    lines.write_text("\n".join(json.dumps(b) for b in battles))
    assert read_judgement_file(lines, "fastchat")["prompt"].iloc[0] == "its own field wins"
    battles[4]["prompt"] = {"text": "not text"}
    lines.write_text("\n".join(json.dumps(b) for b in battles))
    with pytest.raises(DataError, match=r"column 'prompt': 1 bad value\(s\): line 5: is a dict .*expected a FastChat"):
        read_judgement_file(lines, "fastchat")
