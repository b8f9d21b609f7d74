"""The arena: pairwise votes on models, pooled anytime-valid statements about their ranks, and replays of real votes.

* :mod:`humeval.arena.counts`: an arena's vote counts per pair (Chatbot Arena's public counts read as they ship);
* :mod:`humeval.arena.replay`: exchangeable replays of counts, and simulations from a model, under a pair policy,
  decided by :mod:`humeval.stopping.pooled`;
* :mod:`humeval.arena.summary`: the rows ``humeval arena replay`` prints, and the fixed-n bootstrap beside them;
* :mod:`humeval.arena.models`: the models of a live arena as endpoints (recorded, OpenAI-compatible, local), their
  answers streamed within limits of time and length (imported on its own: ``from humeval.arena.models import ...``);
* :mod:`humeval.arena.ppi`: crowd votes with a judge on the same pairs (LLMFAO), prediction-powered Bradley-Terry
  scores at fixed n and watched (``humeval arena replay --judge``);
* :mod:`humeval.arena.export`: a study's pairwise votes as FastChat battle logs and DataFrames;
* :mod:`humeval.arena.llmfao`: LLMFAO's votes with the texts of both outputs (for style control).
"""

from humeval.arena.counts import ArenaCounts, counts_from_battles, pair_matrices, read_arena_counts, read_arena_votes
from humeval.arena.export import BATTLE_LOG_COLUMNS, battle_log, study_battle_log, write_battle_log
from humeval.arena.llmfao import read_llmfao_battles
from humeval.arena.ppi import JudgedVotes, PPIRow, arena_ppi, read_judged_votes
from humeval.arena.replay import QUESTIONS, ReplayResult, draw_votes, replay_counts, simulate_statements
from humeval.arena.summary import (
    BootstrapRanks,
    ReplayRow,
    arena_replay,
    bootstrap_ranks,
    make_intransitive,
    summarise,
    wrong_upper_bound,
)

__all__ = [
    "BATTLE_LOG_COLUMNS",
    "QUESTIONS",
    "ArenaCounts",
    "BootstrapRanks",
    "JudgedVotes",
    "PPIRow",
    "ReplayResult",
    "ReplayRow",
    "arena_ppi",
    "arena_replay",
    "battle_log",
    "bootstrap_ranks",
    "counts_from_battles",
    "draw_votes",
    "make_intransitive",
    "pair_matrices",
    "read_arena_counts",
    "read_arena_votes",
    "read_judged_votes",
    "read_llmfao_battles",
    "replay_counts",
    "simulate_statements",
    "study_battle_log",
    "summarise",
    "wrong_upper_bound",
    "write_battle_log",
]
