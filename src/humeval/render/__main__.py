"""``python -m humeval.render`` prints the stylesheet of rendered outputs (``server/static/render.css``)."""

from humeval.render.outputs import highlight_css

print(highlight_css(), end="")
