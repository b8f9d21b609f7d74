"""The crowd platforms by name: :data:`PLATFORMS`, the names ``platform.kind`` takes, and :func:`platform_of`.

Each entry is the platform's facts (:class:`~humeval.protocol.platform_kinds.PlatformKind`: title, entry
parameters, fee, minimum pay...), plain data written once in :mod:`humeval.protocol.platform_kinds`; the
adapter implementing its operations is imported by its dotted name when :func:`platform_of` first asks
for it. This module imports no platform, so reading the facts (``validate``, the budget) loads none.
"""

from __future__ import annotations

from humeval.platforms.base import platform_of
from humeval.protocol.platform_kinds import PLATFORM_KINDS, PlatformKind, platform_kind

__all__ = ["PLATFORMS", "PlatformKind", "platform_kind", "platform_of"]

#: every platform's facts by ``platform.kind`` (the same registry as ``PLATFORM_KINDS``)
PLATFORMS = PLATFORM_KINDS
