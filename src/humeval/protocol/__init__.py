"""The study file: models, loading, lock and signature."""

from humeval.protocol.load import PROTOCOL_FILE, load_protocol, parse_protocol
from humeval.protocol.models import *  # noqa: F403
from humeval.protocol.models import __all__ as _models
from humeval.protocol.signature import signature

__all__ = ["PROTOCOL_FILE", "load_protocol", "parse_protocol", "signature", *_models]
