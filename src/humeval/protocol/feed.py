"""Which protocols may feed the stopping rule at each judgement (``stopping.feed: judgement``).

A judgement fed to the rule cannot be taken back, so every exclusion rule must have decided about it before it is
fed. The qualification (``design.qualification`` attention checks at the start of every list, judged by the
``attention`` rule) decides about the participant before their first watched task; a judgement-scope ``min-time``
decides about the judgement alone, as it is submitted. Every other rule judges a participant's whole session
(same-side, straight-lining, inconsistent repeats, a participant's median time) and could exclude what was fed; so
could an attention check placed after the qualification. One place states the rule: ``validate`` reports it, and the
store refuses to serve such a protocol.
"""

from __future__ import annotations

from typing import Any

from humeval.protocol.models import AttentionExclusion, MinTimeExclusion, Protocol

__all__ = ["feed_problems"]

_SESSION = "or set stopping.feed: session (the default: outcomes fed when the session ends, after every rule ran)"


def feed_problems(protocol: Protocol) -> list[tuple[tuple[Any, ...], str]]:
    """What makes the protocol unfit for ``stopping.feed: judgement``, as (field path, message); empty when it is fit
    (or feeds at the session's end)."""
    stopping = protocol.stopping
    if stopping is None or stopping.feed != "judgement":
        return []
    out: list[tuple[tuple[Any, ...], str]] = []
    strategy = protocol.assignment.strategy
    if strategy != "list":
        why = (f"'judgement' needs assignment.strategy 'list', got '{strategy}': a pool strategy's label already "
               "reaches the rule when its voters are settled (its votes come from several participants, each judged "
               f"on their whole session); use strategy list, {_SESSION}")
        out.append((("stopping", "feed"), why))
    for i, rule in enumerate(protocol.exclusion):
        if isinstance(rule, AttentionExclusion) or (isinstance(rule, MinTimeExclusion) and rule.scope == "judgement"):
            continue
        what = "min-time with scope participant" if isinstance(rule, MinTimeExclusion) else rule.rule
        why = (f"rule '{what}' judges a participant's whole session and could exclude judgements already fed to the "
               "rule with stopping.feed: judgement; keep only attention and min-time with scope: judgement (decided "
               f"before feeding), {_SESSION}")
        out.append((("exclusion", i), why))
    design = protocol.design
    if not any(isinstance(r, AttentionExclusion) for r in protocol.exclusion):
        why = ("stopping.feed: judgement feeds a participant once they passed the qualification, which the "
               f"'attention' rule judges: add `- rule: attention` (with max_failures), {_SESSION}")
        out.append((("exclusion",), why))
    if design.qualification == 0:
        why = ("stopping.feed: judgement needs a qualification before any watched task: set design.qualification "
               "(attention checks at the start of every list, at most design.attention_checks = "
               f"{design.attention_checks}), {_SESSION}")
        out.append((("design", "qualification"), why))
    elif design.attention_checks > design.qualification:
        why = (f"{design.attention_checks} attention checks, {design.qualification} of them the qualification: with "
               "stopping.feed: judgement a check failed after the qualification could exclude a participant whose "
               f"judgements were fed; set design.qualification: {design.attention_checks} (every check first), "
               f"{_SESSION}")
        out.append((("design", "attention_checks"), why))
    return out
