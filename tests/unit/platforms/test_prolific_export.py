"""Prolific's submissions export keeps the submission id and the time taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.errors import PlatformError
from humeval.platforms.prolific import read_submissions

#: the first columns of the app's export, in its order, then demographics humeval does not read
HEADER = ("Submission id,Participant id,Status,Custom study tncs accepted at,Started at,Completed at,Reviewed at,"
          "Archived at,Time taken,Completion code,Total approvals,Fluent languages,Age,Sex")


def test_the_export_keeps_submission_id_and_time_taken(tmp_path: Path) -> None:
    path = tmp_path / "prolific_export_671b8ae84509b9a624b95e13.csv"
    path.write_text(
        "\ufeff" + HEADER + "\n"
        "671b8e95b17f88050648883e,5e9088a8a4b6ed018b45ba7b,APPROVED,Not Applicable,2024-10-25T12:27:09.179000Z,"
        "2024-10-25T12:46:18.540000Z,2024-10-25T23:35:53.040000Z,2024-10-25T12:46:19.217499Z,1150,C0MPL3TE,12,"
        "English,31,Female\n"
        "671b8e95b17f88050648883f,5e9088a8a4b6ed018b45ba7c,RETURNED,Not Applicable,2024-10-25T12:30:00Z,,,,,,3,"
        "English,45,Male\n", encoding="utf-8")
    rows = read_submissions(path)
    assert rows[0] == {"submission_id": "671b8e95b17f88050648883e", "participant_id": "5e9088a8a4b6ed018b45ba7b",
                       "status": "APPROVED", "completion_code": "C0MPL3TE",
                       "started_at": "2024-10-25T12:27:09.179000Z", "completed_at": "2024-10-25T12:46:18.540000Z",
                       "reviewed_at": "2024-10-25T23:35:53.040000Z", "time_taken": 1150.0}
    # 12:27:09.179 -> 12:46:18.540 is 1,149.4 s: the export's "Time taken" is in seconds
    assert rows[1]["submission_id"] == "671b8e95b17f88050648883f" and rows[1]["time_taken"] is None


def test_a_bad_time_or_a_foreign_file_is_refused_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("Participant id,Status,Time taken\nP1,APPROVED,12\nP2,APPROVED,twelve\n", encoding="utf-8")
    with pytest.raises(PlatformError, match=r"line 3: Time taken: seconds \(a number\), got 'twelve'"):
        read_submissions(path)
    path.write_text("Participant id,Status,Time taken\nP1,APPROVED,nan\n", encoding="utf-8")
    with pytest.raises(PlatformError, match="line 2"):
        read_submissions(path)
    path.write_text("worker,answer\nW1,A\n", encoding="utf-8")
    with pytest.raises(PlatformError, match="not a Prolific submissions export"):
        read_submissions(path)
    path.write_text("participant_id,status\nP1,AWAITING REVIEW\n", encoding="utf-8")  # no id, no time: still read
    assert read_submissions(path) == [{"submission_id": "", "participant_id": "P1", "status": "AWAITING REVIEW",
                                       "completion_code": "", "started_at": "", "completed_at": "",
                                       "reviewed_at": "", "time_taken": None}]
