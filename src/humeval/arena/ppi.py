"""LLMFAO's crowd votes with a judge on the same pairs: prediction-powered Bradley-Terry scores, fixed-n and watched.

:func:`read_judged_votes` joins a crowd vote table (LLMFAO's ``id``, ``left``, ``right``, ``winner``) with a judge's
verdict on the same comparisons (GPT-4's or GPT-3.5's file, one verdict per ``id``; a verdict given with the sides
swapped is turned round). Two checks of prediction-powered inference (:mod:`humeval.stats.ppi_bt`) on it:

* :func:`ppi_splits`, fixed n: ``splits`` random labelled subsets of ``share`` of the votes, the judge on the rest;
  each split's PPI++ and human-only 95 % intervals of the centred scores against the fit to every human vote (the
  leaderboard's answer), the power-tuning weight, and the human votes the human-only fit would need for the PPI
  interval's width;
* :func:`ppi_sequence`, watched: the votes arrive in random orders, the judge sees every battle and a human labels
  each with probability ``share``; asymptotic confidence sequences (Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas
  2024) around the PPI++ and the human-only fit resolve the statements "i above j" (every pair, at
  delta / (K (K - 1) / 2) each, so the rank sets hold together), and the human votes until each statement resolves
  are compared, with and without the judge.

:func:`agreement` measures what bounds the saving: the judge's agreement with the crowd, the correlation of their
residuals from the fit (the gradient terms PPI uses), and the share of the residual variance that lies between
comparisons rather than between the workers of one comparison (no judge that sees only the comparison can predict
the rest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from humeval.errors import DataError, HumevalError
from humeval.rng import Seed, as_generator, stream
from humeval.stats.ppi_bt import PPIBradleyTerry, VotePairs, bt_fit, ppi_bradley_terry, vote_pairs

__all__ = ["Agreement", "JudgedVotes", "PPIRow", "PPISequence", "PPISplits", "agreement", "arena_ppi",
           "asymptotic_cs_multiplier", "other_workers", "ppi_row", "ppi_sequence", "ppi_splits", "read_judged_votes"]

_LABEL = {"left": 1.0, "right": 0.0, "tie": 0.5}


@dataclass(frozen=True)
class JudgedVotes:
    """Crowd votes with a judge's verdict on each vote's comparison: ``human[v]`` / ``judge[v]`` for the left
    system (1, 0, 0.5 tie); ``item[v]`` the comparison; ``votes`` maps them onto pairs of ``models``."""

    models: tuple[str, ...]
    left: np.ndarray
    right: np.ndarray
    human: np.ndarray
    judge: np.ndarray
    item: np.ndarray
    votes: VotePairs
    judge_name: str

    def with_judge(self, judge: np.ndarray, name: str) -> JudgedVotes:
        return JudgedVotes(self.models, self.left, self.right, self.human, np.asarray(judge, dtype=float),
                           self.item, self.votes, name)

    def truth(self) -> np.ndarray:
        """Centred Bradley-Terry scores (ties as halves) of every human vote."""
        th = bt_fit(self.votes, self.human)
        centred: np.ndarray = th - th.mean()
        return centred


def _table(path: Path, what: str):  # type: ignore[no-untyped-def]
    import pandas as pd

    if not path.is_file():
        raise DataError(f"{path}: no such {what} file")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable CSV ({exc})") from None
    missing = [c for c in ("id", "left", "right", "winner") if c not in table.columns]
    if missing:
        raise DataError(f"{path}: a {what} needs the columns id, left, right and winner; missing {missing}")
    bad = ~table["winner"].isin(list(_LABEL))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{path}: row {row + 2}: winner {table['winner'].iloc[row]!r} is not left, right or tie")
    return table


def read_judged_votes(crowd: str | Path, judge: str | Path) -> JudgedVotes:
    """Crowd votes (CSV: id, left, right, winner) joined with a judge's verdicts on the same ids."""
    c = _table(Path(crowd), "crowd vote table")
    j = _table(Path(judge), "judge verdict table").drop_duplicates("id").set_index("id")
    missing = ~c["id"].isin(j.index)
    if missing.any():
        raise DataError(f"{judge}: no verdict for comparison id {c['id'][missing].iloc[0]!r} of {crowd} "
                        f"({int(missing.sum())} crowd votes have none)")
    jj = j.loc[c["id"]]
    same = (jj["left"].to_numpy() == c["left"].to_numpy()) & (jj["right"].to_numpy() == c["right"].to_numpy())
    flipped = (jj["left"].to_numpy() == c["right"].to_numpy()) & (jj["right"].to_numpy() == c["left"].to_numpy())
    if not (same | flipped).all():
        row = int(np.flatnonzero(~(same | flipped))[0])
        raise DataError(f"{judge}: comparison id {c['id'].iloc[row]!r} names other models than {crowd} does")
    f = jj["winner"].map(_LABEL).to_numpy(dtype=float)
    f = np.where(same, f, 1.0 - f)
    models = tuple(sorted(set(c["left"]) | set(c["right"])))
    index = {m: i for i, m in enumerate(models)}
    a, b = c["left"].map(index).to_numpy(), c["right"].map(index).to_numpy()
    item = np.unique(c["id"].to_numpy(), return_inverse=True)[1].reshape(-1)
    return JudgedVotes(models, a, b, c["winner"].map(_LABEL).to_numpy(dtype=float), f, item, vote_pairs(a, b, len(models)),
                       Path(judge).name)


def other_workers(votes: JudgedVotes) -> np.ndarray:
    """A bound, not a judge: each vote's "verdict" is the mean of the *other* crowd votes on its comparison (0.5 when
    it has none). It knows what no judge of the comparison alone can: how this crowd reads this comparison."""
    total = np.bincount(votes.item, weights=votes.human)
    count = np.bincount(votes.item)
    others = count[votes.item] - 1
    out: np.ndarray = np.where(others > 0, (total[votes.item] - votes.human) / np.maximum(others, 1), 0.5)
    return out


@dataclass(frozen=True)
class Agreement:
    """The judge against the crowd: ``decisive_agreement`` (both decisive, same side), ``correlation`` of the labels,
    ``residual_correlation`` of the residuals from the all-votes fit (the gradient terms PPI++ uses; the variance
    saving of a small labelled share is about its square), ``between_share`` of the residual variance between
    comparisons (the most any judge of the comparison can explain), the tie shares."""

    judge: str
    decisive_agreement: float
    correlation: float
    residual_correlation: float
    between_share: float
    human_ties: float
    judge_ties: float


def agreement(votes: JudgedVotes) -> Agreement:
    th = bt_fit(votes.votes, votes.human)
    sig = 1.0 / (1.0 + np.exp(-(th[votes.left] - th[votes.right])))
    y, f = votes.human, votes.judge
    dec = (y != 0.5) & (f != 0.5)
    ry = y - sig
    count = np.bincount(votes.item).astype(float)
    mean = np.bincount(votes.item, weights=ry) / count
    within = float(((ry - mean[votes.item]) ** 2).sum() / max(float((count - 1).sum()), 1.0))
    return Agreement(votes.judge_name, float((y[dec] == f[dec]).mean()), float(np.corrcoef(y, f)[0, 1]),
                     float(np.corrcoef(ry, f - sig)[0, 1]), float(1.0 - within / ry.var(ddof=1)),
                     float((y == 0.5).mean()), float((f == 0.5).mean()))


def _centred(fit: PPIBradleyTerry) -> tuple[np.ndarray, np.ndarray]:
    k = fit.theta.shape[-1]
    c = np.eye(k) - 1.0 / k
    th = fit.theta - fit.theta.mean(axis=-1, keepdims=True)
    var = np.einsum("ik,skl,il->si", c, fit.cov, c)
    return th, np.sqrt(np.clip(var, 0.0, None))


@dataclass(frozen=True)
class PPISplits:
    """Fixed-n PPI++ over ``splits`` random labelled subsets (``labelled`` votes each of ``votes``).

    ``covered_ppi[s, i]`` / ``covered_human[s, i]``: split s's interval of model i's centred score holds the
    all-votes fit; ``lam[s]``; ``se_ppi`` / ``se_human`` [s, i]; ``votes_needed[s, i]``: human votes the human-only
    fit needs for the PPI interval's width (finite-population variance (1/m - 1/V) s^2 solved for m).
    """

    judge: str
    share: float
    labelled: int
    votes: int
    level: float
    covered_ppi: np.ndarray
    covered_human: np.ndarray
    lam: np.ndarray
    se_ppi: np.ndarray
    se_human: np.ndarray
    votes_needed: np.ndarray

    @property
    def splits(self) -> int:
        return int(self.covered_ppi.shape[0])

    def coverage(self, which: str = "ppi") -> tuple[float, float, float]:
        """Mean coverage over models and splits, and a 95 % interval from the spread of the splits' shares."""
        cov = (self.covered_ppi if which == "ppi" else self.covered_human).mean(axis=-1)
        half = 1.96 * float(cov.std(ddof=1)) / np.sqrt(len(cov))
        return float(cov.mean()), float(cov.mean()) - half, float(cov.mean()) + half

    def per_model_bounds(self, which: str = "ppi") -> tuple[float, float]:
        """The lowest lower and highest upper 95 % Clopper-Pearson bound of one model's coverage over the splits."""
        from scipy.stats import beta

        hits = (self.covered_ppi if which == "ppi" else self.covered_human).sum(axis=0)
        n = self.splits
        lo = np.where(hits > 0, beta.ppf(0.025, hits, n - hits + 1), 0.0)
        hi = np.where(hits < n, beta.ppf(0.975, hits + 1, n - hits), 1.0)
        return float(lo.min()), float(hi.max())

    @property
    def saving(self) -> float:
        """1 - (human votes with the judge) / (human votes without it for the same widths): median over models and
        splits."""
        return float(np.median(1.0 - self.labelled / self.votes_needed))


def _check_share(share: float, what: str) -> float:
    if not 0.0 < share < 1.0:
        raise HumevalError(f"{what}: the labelled share must lie in (0, 1), got {share!r}")
    return float(share)


def ppi_splits(votes: JudgedVotes, *, share: float = 0.5, splits: int = 1000, level: float = 0.95, seed: Seed = 0,
               batch: int = 100, finite_population: bool = True) -> PPISplits:
    """Fixed-n PPI++ and human-only intervals on ``splits`` random labelled subsets of ``share`` of the votes."""
    from scipy.stats import norm

    share = _check_share(share, "ppi splits")
    if isinstance(splits, bool) or int(splits) != splits or splits < 1:
        raise HumevalError(f"ppi splits: splits must be a positive integer, got {splits!r}")
    rng = as_generator(seed)
    v = len(votes.human)
    n = int(round(share * v))
    truth = votes.truth()
    z = float(norm.ppf(0.5 + level / 2))
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("cp", "ch", "lam", "sp", "sh", "need")}
    done = 0
    while done < splits:
        s = min(batch, int(splits) - done)
        lab = np.zeros((s, v), dtype=bool)
        idx = np.argsort(rng.random((s, v)), axis=-1)[:, :n]
        np.put_along_axis(lab, idx, True, axis=-1)
        ppi = ppi_bradley_terry(votes.votes, votes.human, votes.judge, lab, finite_population=finite_population)
        hum = ppi_bradley_terry(votes.votes, votes.human, votes.judge, lab, lam=0.0,
                                finite_population=finite_population)
        tp, sp = _centred(ppi)
        th, sh = _centred(hum)
        parts["cp"].append(np.abs(tp - truth) <= z * sp)
        parts["ch"].append(np.abs(th - truth) <= z * sh)
        parts["lam"].append(ppi.lam)
        parts["sp"].append(sp)
        parts["sh"].append(sh)
        # human-only variance (1/m - 1/V) s2 (finite population; 1/m without it) equated to the PPI variance
        fpc = 1.0 / v if finite_population else 0.0
        s2 = sh**2 / (1.0 / n - fpc)
        parts["need"].append(1.0 / (sp**2 / s2 + fpc))
        done += s
    cat = {k: np.concatenate(x) for k, x in parts.items()}
    return PPISplits(votes.judge_name, share, n, v, level, cat["cp"], cat["ch"], cat["lam"], cat["sp"], cat["sh"],
                     cat["need"])


def asymptotic_cs_multiplier(t: np.ndarray | float, alpha: float, tuned_for: float) -> np.ndarray:
    """How many standard errors a two-sided asymptotic confidence sequence spans after ``t`` observations.

    Waudby-Smith et al. (2024), Theorem 2.2: the mean of i.i.d. terms with variance sigma^2 lies within
    sigma sqrt(2 (t rho^2 + 1) / (t^2 rho^2) log(sqrt(t rho^2 + 1) / alpha)) of the running mean at every t with
    probability tending to >= 1 - alpha; in standard errors sigma / sqrt(t) that is the value returned. ``rho``
    is tuned to be tightest at ``tuned_for`` observations: rho^2 = (-2 log alpha + log(-2 log alpha + 1)) / t*.
    """
    la = -2.0 * np.log(alpha)
    rho2 = (la + np.log(la + 1.0)) / float(tuned_for)
    tt = np.asarray(t, dtype=float) * rho2
    out: np.ndarray = np.sqrt(2.0 * (tt + 1.0) / tt * np.log(np.sqrt(tt + 1.0) / alpha))
    return out


@dataclass(frozen=True)
class PPISequence:
    """Watched statements over ``replays`` random orders: ``human_votes_*[r, p]`` human labels until "i above j" (or
    j above i) for pair ``pairs[p]`` was first resolved (-1: never), with the judge (``ppi``) and from the same
    human labels without it (``human``); ``wrong_*[r]``: some resolved statement contradicts the all-votes fit; ``lam[r]``: the last
    tuning weight; ``labels_total[r]``: human labels the judged replay had with every vote."""

    judge: str
    share: float
    delta: float
    votes: int
    pairs: np.ndarray
    human_votes_ppi: np.ndarray
    human_votes_human: np.ndarray
    wrong_ppi: np.ndarray
    wrong_human: np.ndarray
    lam: np.ndarray
    labels_total: np.ndarray
    looks: tuple[int, ...]

    @property
    def replays(self) -> int:
        return int(self.human_votes_ppi.shape[0])

    def common(self) -> np.ndarray:
        """[r, p]: the statements compared: those the human-only replay resolved within the labels the judged
        replay had in all (a statement the judged replay never resolved counts at that total, a lower bound)."""
        both: np.ndarray = (self.human_votes_human >= 0) & (self.human_votes_human <= self.labels_total[:, None])
        return both

    def ppi_votes(self) -> np.ndarray:
        """Human votes with the judge per statement, an unresolved one at the replay's labels in all."""
        out: np.ndarray = np.where(self.human_votes_ppi >= 0, self.human_votes_ppi, self.labels_total[:, None])
        return out

    def votes_for(self, m: int, which: str = "ppi") -> np.ndarray:
        """[r]: human votes until the replay had resolved ``m`` statements (-1: it never did)."""
        hv = self.human_votes_ppi if which == "ppi" else self.human_votes_human
        srt = np.sort(np.where(hv >= 0, hv, np.iinfo(np.int64).max), axis=-1)
        got = srt[:, m - 1] if 0 < m <= srt.shape[-1] else np.full(len(srt), np.iinfo(np.int64).max)
        out: np.ndarray = np.where(got < np.iinfo(np.int64).max, got, -1)
        return out

    def count_ratio(self, m: int) -> tuple[float, float, int]:
        """Mean human votes until ``m`` statements were resolved, with and without the judge, over the replays where
        both got there, and how many did."""
        a, b = self.votes_for(m, "ppi"), self.votes_for(m, "human")
        ok = (a >= 0) & (b >= 0)
        if not ok.any():
            return float("nan"), float("nan"), 0
        return float(a[ok].mean()), float(b[ok].mean()), int(ok.sum())

    def ratio(self) -> float:
        """Human votes with the judge over without, summed over the statements compared (:meth:`common`)."""
        both = self.common()
        return float(self.ppi_votes()[both].sum() / max(int(self.human_votes_human[both].sum()), 1))


def ppi_sequence(votes: JudgedVotes, *, share: float = 0.5, replays: int = 50, delta: float = 0.05, seed: Seed = 0,
                 first: int = 1000, growth: float = 0.15, tuned_for: int | None = None) -> PPISequence:
    """Replay the votes in random orders with the judge on every vote and a human on each with probability ``share``.

    Without the judge: the same human labels, in the same order, fitted alone (the paired comparison). Looks at ``first`` votes and then every ``growth``
    times more; a look whose fits do not exist (a model without a win or without a loss yet) is skipped. The
    confidence sequences are asymptotic, tuned for ``tuned_for`` votes (default: half the votes), the human-only
    one for ``share`` of them in labels (the same point of the stream).
    """
    from humeval.stopping._validate import check_delta

    share = _check_share(share, "ppi sequence")
    delta = check_delta(delta)
    rng = as_generator(seed)
    v, k = len(votes.human), len(votes.models)
    truth = votes.truth()
    r = int(replays)
    order = np.argsort(rng.random((r, v)), axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(v)[None, :], axis=-1)  # rank[r, v]: position of vote v
    coin = rng.random((r, v)) < share
    iu, ju = np.triu_indices(k, 1)
    alpha = delta / len(iu)
    star = float(tuned_for) if tuned_for is not None else v / 2.0
    looks = []
    t = float(first)
    while t < v:
        looks.append(int(t))
        t *= 1.0 + growth
    looks.append(v)
    hv_ppi = np.full((r, len(iu)), -1, dtype=np.int64)
    hv_hum = np.full((r, len(iu)), -1, dtype=np.int64)
    wrong_ppi = np.zeros(r, dtype=bool)
    wrong_hum = np.zeros(r, dtype=bool)
    lam = np.zeros(r)
    above = truth[iu] > truth[ju]
    done_looks = []
    for t in looks:
        prefix = rank < t
        lab = prefix & coin
        try:
            ppi = ppi_bradley_terry(votes.votes, votes.human, votes.judge, lab, unlabelled=prefix & ~coin)
            hum = ppi_bradley_terry(votes.votes, votes.human, votes.judge, lab, unlabelled=np.zeros_like(prefix),
                                    lam=0.0)
        except DataError:
            continue
        done_looks.append(t)
        lam = ppi.lam
        # the same labels with and without the judge, both sequences tuned for the same number of human labels
        # (the multiplier depends on t rho^2 only: with lam = 0 the judged one is the human-only one), so a
        # difference is the judge's
        n_lab = lab.sum(axis=-1)
        for fit, hv, wrong, used, mult in (
                (ppi, hv_ppi, wrong_ppi, n_lab, np.full(r, float(asymptotic_cs_multiplier(t, alpha, star)))),
                (hum, hv_hum, wrong_hum, n_lab, asymptotic_cs_multiplier(n_lab, alpha, share * star))):
            diff = fit.theta[:, iu] - fit.theta[:, ju]
            se = fit.contrast_se(iu, ju)
            res = np.abs(diff) > mult[:, None] * se
            new = res & (hv < 0)
            hv[new] = np.broadcast_to(used[:, None], hv.shape)[new]
            wrong |= (res & ((diff > 0) != above[None, :])).any(axis=-1)
    return PPISequence(votes.judge_name, share, delta, v, np.stack([iu, ju], axis=1), hv_ppi, hv_hum, wrong_ppi,
                       wrong_hum, lam, (coin).sum(axis=-1), tuple(done_looks))


@dataclass(frozen=True)
class PPIRow:
    """One judge (or none) on the LLMFAO replay: agreement, fixed-n coverage and saving, watched votes needed.

    ``coverage`` / ``coverage_human`` with ``coverage_low`` / ``coverage_high`` (95 % over the splits);
    ``coverage_model_min`` / ``_max``: the least and most covered model's share of splits (PPI);
    ``statements_m``: the number of resolved statements the votes are counted to; ``votes_judge`` /
    ``votes_human``: mean human votes until that many were resolved with / without the judge; ``wrong_*``:
    replays with a resolved statement contradicting the all-votes fit."""

    judge: str
    decisive_agreement: float
    residual_correlation: float
    between_share: float
    share: float
    splits: int
    lam: float
    coverage: float
    coverage_low: float
    coverage_high: float
    coverage_human: float
    coverage_model_min: float
    coverage_model_max: float
    fixed_n_saving: float
    replays: int
    statements_m: int
    votes_judge: float
    votes_human: float
    votes_ratio: float
    resolved_judge: float
    resolved_human: float
    wrong_judge: int
    wrong_human: int

    def to_json(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


def ppi_row(votes: JudgedVotes, *, share: float = 0.5, splits: int = 1000, replays: int = 50, delta: float = 0.05,
            seed: int = 0, statements: int | None = None) -> PPIRow:
    """Every number of one judge on the replay: :func:`agreement`, :func:`ppi_splits` and :func:`ppi_sequence`.

    ``statements``: count the watched human votes until this many statements were resolved (default: half the
    mean number the human-only replay resolved with the judged replay's labels)."""
    ag = agreement(votes)
    sp = ppi_splits(votes, share=share, splits=splits, seed=stream(seed, "ppi-splits"))
    sq = ppi_sequence(votes, share=share, replays=replays, delta=delta,
                      seed=stream(seed, "ppi-sequence"))
    if statements is None:
        within = ((sq.human_votes_human >= 0) & (sq.human_votes_human <= sq.labels_total[:, None])).sum(axis=-1)
        statements = max(1, int(within.mean() // 2))
    vj, vh, _ = sq.count_ratio(statements)
    cov, lo, hi = sp.coverage("ppi")
    return PPIRow(votes.judge_name, round(ag.decisive_agreement, 4), round(ag.residual_correlation, 4),
                  round(ag.between_share, 4), share, sp.splits, round(float(sp.lam.mean()), 4), round(cov, 4),
                  round(lo, 4), round(hi, 4), round(sp.coverage("human")[0], 4),
                  round(float(sp.covered_ppi.mean(axis=0).min()), 4), round(float(sp.covered_ppi.mean(axis=0).max()), 4),
                  round(sp.saving, 4), sq.replays,
                  int(statements), round(vj, 1), round(vh, 1), round(vj / vh, 4) if vh == vh else float("nan"),
                  round(float((sq.human_votes_ppi >= 0).sum(axis=-1).mean()), 1),
                  round(float((sq.human_votes_human >= 0).sum(axis=-1).mean()), 1), int(sq.wrong_ppi.sum()),
                  int(sq.wrong_human.sum()))


def arena_ppi(crowd: str | Path, judges: str | Path | Sequence[str | Path], *, share: float = 0.5, splits: int = 1000,
              replays: int = 50, delta: float = 0.05, seed: int = 0, bound: bool = True) -> list[PPIRow]:
    """The API of ``humeval arena replay CROWD --judge FILE``: one :class:`PPIRow` per judge file, and with
    ``bound`` one for the other crowd workers' mean on the same comparison (:func:`other_workers`, what a judge
    that reads this crowd's taste would give: a bound, not a judge)."""
    files = [judges] if isinstance(judges, (str, Path)) else list(judges)
    if not files:
        raise HumevalError("arena ppi: name at least one judge verdict file (--judge)")
    rows = []
    first = None
    for f in files:
        jv = read_judged_votes(crowd, f)
        first = first or jv
        rows.append(ppi_row(jv, share=share, splits=splits, replays=replays, delta=delta, seed=seed))
    if bound and first is not None:
        rows.append(ppi_row(first.with_judge(other_workers(first), "other workers (bound)"), share=share,
                            splits=splits, replays=replays, delta=delta, seed=seed))
    return rows
