"""The signature printed under every result: what produced this number."""

from __future__ import annotations

from humeval._version import __version__

__all__ = ["signature"]


def signature(protocol_sha256: str, seed: int, **extra: object) -> str:
    """``humeval|protocol:<hash8>|seed:<n>|version:<v>`` plus any ``key:value`` in ``extra``.

    In the spirit of sacrebleu's signatures: paste it next to a number in a paper and
    anyone can tell which protocol, seed and version produced it.
    """
    parts = ["humeval", f"protocol:{protocol_sha256[:8]}", f"seed:{seed}"]
    parts += [f"{k}:{v}" for k, v in extra.items()]
    parts.append(f"version:{__version__}")
    return "|".join(parts)
