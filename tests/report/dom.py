"""A small HTML reader for the report tests: start tags with their attributes, text, and table counts."""

from __future__ import annotations

from html.parser import HTMLParser


class Elements(HTMLParser):
    """Every start tag with its attributes, the text outside tags, ``counts``: the text of each ``data-count``
    cell keyed by its row (``data-category`` or ``data-lane``) and the count's name, and ``cells``: the text of
    each ``data-row`` cell keyed by its table's ``data-contract``, the row and its ``data-backend``."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.counts: dict[tuple[str, str], str] = {}
        self.cells: dict[tuple[str, str, str], str] = {}
        self._row = ""
        self._table = ""
        self._cell: str | None = None
        self._side: tuple[str, str, str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append((tag, found))
        if tag == "table":
            self._table = found.get("data-contract") or ""
        if tag == "tr":
            self._row = found.get("data-category") or found.get("data-lane") or ""
        self._cell = found.get("data-count")
        row = found.get("data-row")
        self._side = (self._table, row, found.get("data-backend") or "") if tag == "td" and row else None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self.counts[self._row, self._cell] = data.strip()
            self._cell = None
        if self._side is not None:
            self.cells[self._side] = data.strip()
            self._side = None
