"""Crowd platforms: entry parameters (Prolific, MTurk, invites), completion, and file routes."""

from humeval.platforms.completion import completion_json
from humeval.platforms.entry import Entry, resolve_entry

__all__ = ["Entry", "completion_json", "resolve_entry"]
