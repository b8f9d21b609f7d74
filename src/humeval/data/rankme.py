"""Importer for the RankME CrowdFlower exports (Novikova, Dušek & Rieser, NAACL 2018).

The data set (CC BY-SA 4.0, ``jeknov/RankME`` ``data/``) is twelve zips, one CrowdFlower
"full report" CSV each, one row per judgement. Their columns differ by file: the rating
columns are ``informativeness``/``naturalness``/``quality`` (single-output files),
``informativeness1..3`` etc. or ``inf1..3`` (RankME files); ``stp2_plainME_nat`` has no
``mr_id`` (recovered from the MR text through the other files); checkbox cells
(``check_those_that_apply``, ``check1..3``) hold several answers separated by a newline
inside a quoted field. :func:`load_rankme` turns all of them into one long table with one
row per score::

    setup method criterion mr_id system judgement position worker_id created_at score
    added missing ok channel trust source

``judgement`` identifies one CSV row (one participant's task) within its ``source`` file;
``position`` is the display slot (1-3) in RankME tasks and 1 otherwise. ``added``,
``missing``, ``ok`` are the quality checkboxes (NaN where the task had none).
"""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from humeval.errors import DataError, did_you_mean

__all__ = [
    "CRITERIA",
    "FILES",
    "METHODS",
    "SYSTEM_NAMES",
    "RankmeFile",
    "load_rankme",
    "read_rankme_file",
]

CRITERIA = ("informativeness", "naturalness", "quality")
METHODS = ("likert", "plainME", "rankME")
SYSTEM_NAMES = {"slug2slug": "Slug2Slug", "sheffield_v2": "Sheffield NLP", "baseline": "TGen"}
_CHECKS = ("added", "missing", "ok")


@dataclass(frozen=True)
class RankmeFile:
    """One export: its zip, what it contains, and its published sha256."""

    zip_name: str
    setup: str
    method: str
    criteria: tuple[str, ...]
    rating_columns: tuple[str, ...]  # per criterion: column stem ("quality" or "quality" + 1..3)
    sha256: str


_ALL = CRITERIA
FILES: tuple[RankmeFile, ...] = (
    RankmeFile(
        "stp1_likert.zip",
        "stp1",
        "likert",
        _ALL,
        _ALL,
        "066303424e4e43cc18bd3288a141ef819415d5a92bab3fbadf0e7dbd5414d64c",
    ),
    RankmeFile(
        "stp1_plainME.zip",
        "stp1",
        "plainME",
        _ALL,
        _ALL,
        "ff237641adc66e30039f59a89182018c9eb0cc3aa8c9c6951c4b194e4bd08751",
    ),
    RankmeFile(
        "stp1_rankME.zip",
        "stp1",
        "rankME",
        _ALL,
        _ALL,
        "1b3c6d812ebb8efda2434b8cb3e72b022a96e78aa8551ea2ba58d2f136432fc1",
    ),
    RankmeFile(
        "stp2_likert_inf.zip",
        "stp2",
        "likert",
        ("informativeness",),
        ("informativeness",),
        "e767a2c8a8ba2652561242d52307d5aeeda18b7962e68c9a123c2751fa4540c3",
    ),
    RankmeFile(
        "stp2_likert_nat.zip",
        "stp2",
        "likert",
        ("naturalness",),
        ("naturalness",),
        "38a7f58eb2d2551e41ea0954f0b91e99fc0f8ada7d1dc6149f4b2aaf054a021b",
    ),
    RankmeFile(
        "stp2_likert_qual.zip",
        "stp2",
        "likert",
        ("quality",),
        ("quality",),
        "0b4f42af25a7c8bcd83f2e96054fe0111f08438ee048f89306fd3f4cb0d89f58",
    ),
    RankmeFile(
        "stp2_plainME_inf.zip",
        "stp2",
        "plainME",
        ("informativeness",),
        ("informativeness",),
        "79128a7385875347112d7b7ce191c9c501bd65210686022861ca64d667978824",
    ),
    RankmeFile(
        "stp2_plainME_nat.zip",
        "stp2",
        "plainME",
        ("naturalness",),
        ("naturalness",),
        "b4b3aaa83dbb270a46235f4844c381dd47f0e7e48be568dad6d6ddca908ccc74",
    ),
    RankmeFile(
        "stp2_plainME_qual.zip",
        "stp2",
        "plainME",
        ("quality",),
        ("quality",),
        "d1d7449c6d0081e632fef6c22bcc6ef6ee4a109da4b80d757779caa4edb839ec",
    ),
    RankmeFile(
        "stp2_rankME_inf.zip",
        "stp2",
        "rankME",
        ("informativeness",),
        ("inf",),
        "bb30864c0543270a7ad21b013e70bec852bc9e322638ca59bd587fc6a6c2f030",
    ),
    RankmeFile(
        "stp2_rankME_nat.zip",
        "stp2",
        "rankME",
        ("naturalness",),
        ("naturalness",),
        "1206a07d913e2096648aa29b76139656a002e239d3dd9ddeab764587e6d71689",
    ),
    RankmeFile(
        "stp2_rankME_qual.zip",
        "stp2",
        "rankME",
        ("quality",),
        ("quality",),
        "00189a983f14d852ae22da043adaa45ec106cdaecdc51833738281690a3ad20d",
    ),
)

_COLUMNS = [
    "setup",
    "method",
    "criterion",
    "mr_id",
    "system",
    "judgement",
    "position",
    "worker_id",
    "created_at",
    "score",
    "added",
    "missing",
    "ok",
    "mr",
    "output",
    "channel",
    "trust",
    "source",
]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_csv(path: Path) -> tuple[str, pd.DataFrame]:
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.lower().endswith(".csv")]
            if len(names) != 1:
                raise DataError(f"{path}: expected one CSV inside the zip, found {names or 'none'}")
            with zf.open(names[0]) as fh:
                # the C parser handles quoted fields with embedded newlines (checkbox cells)
                frame = pd.read_csv(
                    fh, dtype={"_worker_id": "string"}, keep_default_na=False, na_values=[""]
                )
    except zipfile.BadZipFile:
        raise DataError(f"{path}: not a zip file (expected a CrowdFlower export zip)") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    return f"{path.name}/{names[0]}", frame


def _require(frame: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"{where}: missing column {missing[0]!r}. {did_you_mean(missing[0], map(str, frame.columns))}"
        )


def _scores(values: pd.Series, method: str, where: str, column: str) -> np.ndarray:
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(numeric) | (numeric != np.round(numeric))
    if method == "likert":
        bad |= (numeric < 1) | (numeric > 6)
        valid = "an integer 1-6"
    else:
        bad |= numeric < 1
        valid = "a positive integer (magnitude estimate, standard = 100)"
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"{where}: row {row + 2} column {column!r}: score {str(values.iloc[row])!r} is not {valid}"
        )
    return numeric


def _checks(values: pd.Series | None, n: int, where: str, column: str) -> dict[str, np.ndarray]:
    if values is None:
        return {c: np.full(n, np.nan) for c in _CHECKS}
    parts = values.fillna("").astype(str).str.split("\n")
    out = {c: parts.map(lambda p, c=c: float(c in p)).to_numpy(float) for c in _CHECKS}
    unknown = parts.map(lambda p: [x for x in p if x not in _CHECKS])
    bad = unknown.map(bool).to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"{where}: row {row + 2} column {column!r}: checkbox value {unknown.iloc[row][0]!r} "
            f"is not one of {', '.join(_CHECKS)}"
        )
    return out


def read_rankme_file(
    path: str | Path, spec: RankmeFile | None = None, *, verify: bool = True
) -> pd.DataFrame:
    """One export as the long table described in the module docstring.

    ``spec`` defaults to the entry of :data:`FILES` whose name matches the zip. With
    ``verify`` the zip's sha256 must match the published one (a modified file is an error).
    ``mr_id`` is NaN for ``stp2_plainME_nat`` (no such column); :func:`load_rankme` fills it.
    """
    path = Path(path)
    if spec is None:
        known = {f.zip_name: f for f in FILES}
        if path.name not in known:
            raise DataError(f"{path}: not a RankME export. {did_you_mean(path.name, known)}")
        spec = known[path.name]
    if not path.is_file():
        raise DataError(f"{path}: file not found (RankME export {spec.zip_name})")
    if verify:
        digest = _sha256(path)
        if digest != spec.sha256:
            raise DataError(
                f"{path}: sha256 {digest} differs from the published {spec.sha256}; "
                "the file was changed (pass verify=False to read it anyway)"
            )
    source, frame = _read_csv(path)
    n = len(frame)
    ranked = spec.method == "rankME"
    positions = (1, 2, 3) if ranked else (1,)
    _require(
        frame,
        ["_worker_id", "_created_at", "mr"] + (["team1", "team2", "team3"] if ranked else ["team"]),
        source,
    )
    pieces = []
    for criterion, stem in zip(spec.criteria, spec.rating_columns, strict=True):
        for pos in positions:
            suffix = str(pos) if ranked else ""
            column = f"{stem}{suffix}"
            _require(frame, [column], source)
            check_col = f"check{pos}" if ranked else "check_those_that_apply"
            checks = _checks(
                frame[check_col] if check_col in frame.columns else None, n, source, check_col
            )
            piece = pd.DataFrame(
                {
                    "setup": spec.setup,
                    "method": spec.method,
                    "criterion": criterion,
                    "mr_id": pd.to_numeric(frame["mr_id"], errors="coerce")
                    if "mr_id" in frame.columns
                    else np.nan,
                    "system": frame[f"team{suffix}"].astype(str).to_numpy(),
                    "judgement": np.arange(n),
                    "position": pos,
                    "worker_id": frame["_worker_id"].astype(str).to_numpy(),
                    "created_at": pd.to_datetime(
                        frame["_created_at"], format="%m/%d/%Y %H:%M:%S"
                    ).to_numpy(),
                    "score": _scores(frame[column], spec.method, source, column),
                    **checks,
                    "mr": frame["mr"].astype(str).to_numpy(),
                    "output": frame[f"ref{suffix}"].astype(str).to_numpy()
                    if f"ref{suffix}" in frame.columns
                    else "",
                    "channel": frame["_channel"].astype(str).to_numpy()
                    if "_channel" in frame.columns
                    else None,
                    "trust": frame["_trust"].to_numpy(float)
                    if "_trust" in frame.columns
                    else np.nan,
                    "source": source,
                }
            )
            pieces.append(piece)
    out = pd.concat(pieces, ignore_index=True)[_COLUMNS]
    unknown = sorted(set(out["system"]) - set(SYSTEM_NAMES))
    if unknown:
        raise DataError(
            f"{source}: unknown system {unknown[0]!r}; expected one of {', '.join(SYSTEM_NAMES)}"
        )
    return out


def load_rankme(directory: str | Path, *, verify: bool = True) -> pd.DataFrame:
    """All twelve exports in ``directory`` as one long table (16,242 scores), ``mr_id`` complete.

    Raises DataError naming the missing zip, a changed file (sha256), a bad score (file,
    CSV row, column, value) or an MR text that cannot be mapped to an ``mr_id``.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(
            f"{directory}: RankME data directory not found (expected the 12 zips of jeknov/RankME data/)"
        )
    frames = [read_rankme_file(directory / spec.zip_name, spec, verify=verify) for spec in FILES]
    data = pd.concat(frames, ignore_index=True)
    known = data.dropna(subset=["mr_id"]).drop_duplicates("mr")
    clash = known.duplicated("mr", keep=False) | known.duplicated("mr_id", keep=False)
    if clash.any():
        raise DataError(
            f"RankME: MR text and mr_id disagree across files (mr_id {known.loc[clash, 'mr_id'].iloc[0]})"
        )
    mapping = dict(zip(known["mr"], known["mr_id"], strict=True))
    lacking = data["mr_id"].isna()
    filled = data.loc[lacking, "mr"].map(mapping)
    if filled.isna().any():
        row = data.loc[lacking][filled.isna().to_numpy()].iloc[0]
        raise DataError(f"{row['source']}: MR {row['mr']!r} has no mr_id in any other file")
    data.loc[lacking, "mr_id"] = filled.to_numpy()
    data["mr_id"] = data["mr_id"].astype(int)
    return data
