"""A small HTML reader for the report tests: start tags with their attributes, text, and table counts."""

from __future__ import annotations

from html.parser import HTMLParser


class Elements(HTMLParser):
    """Every start tag with its attributes, the text outside tags, and ``counts``: the text of each
    ``data-count`` cell keyed by its row (``data-category`` or ``data-lane``) and the count's name."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.counts: dict[tuple[str, str], str] = {}
        self._row = ""
        self._cell: str | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append((tag, found))
        if tag == "tr":
            self._row = found.get("data-category") or found.get("data-lane") or ""
        self._cell = found.get("data-count")

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self.counts[self._row, self._cell] = data.strip()
            self._cell = None
