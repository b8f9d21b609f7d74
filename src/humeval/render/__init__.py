"""How an output is shown to a person: plain text, Markdown or a conversation, as safe HTML.

One module used by the participant pages and by the report's examples, so that a
researcher reads in the report exactly what a participant saw.
"""

from humeval.render.diff import word_diff
from humeval.render.outputs import (
    OUTPUT_FORMATS,
    RenderedOutput,
    highlight_css,
    parse_conversation,
    render_output,
)

__all__ = ["OUTPUT_FORMATS", "RenderedOutput", "highlight_css", "parse_conversation", "render_output", "word_diff"]
