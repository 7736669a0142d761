"""``MindPage``: MindSpore's paged reader of a MindRecord set, grouping rows by an index field."""

from __future__ import annotations

import json
import os
from typing import Any

from minddata.errors import ArgumentError
from minddata.record.mindrecord_format import MindRecordSet

__all__ = ["MindPage"]


class MindPage:
    """Read a MindRecord set a page at a time, grouped by one of its index fields (MindSpore's
    ``mindspore.mindrecord.MindPage``).

    Args:
        file_name: one shard file (the whole set is read) or a list of shard files.
        num_consumer: accepted for MindSpore compatibility (reading is single-threaded here), >= 1
            (MindSpore also refuses more than the machine's cores).

    ``candidate_fields`` are the set's index fields (``FileWriter.add_index``); setting
    ``category_field`` to one groups the rows by its values, which ``read_category_info`` lists (a
    JSON string ``{"categories": [{"count", "id", "name"}, …], "key": "<field>_0"}``, the values in
    ascending order); ``read_at_page_by_id``/``read_at_page_by_name`` return page ``page`` (from 0) of
    ``num_row`` rows of one category, as dicts in write order.

    Examples:
        >>> import os, tempfile
        >>> from minddata.mindrecord import FileWriter, MindPage
        >>> path = os.path.join(tempfile.mkdtemp(), "p.mindrecord")
        >>> writer = FileWriter(path)
        >>> _ = writer.add_schema({"name": {"type": "string"}, "label": {"type": "int32"}})
        >>> writer.add_index(["label"])
        >>> writer.write_raw_data([{"name": n, "label": i % 2} for i, n in enumerate("abcde")])
        >>> writer.commit()
        >>> page = MindPage(path)
        >>> page.category_field = "label"
        >>> page.read_category_info()
        '{"categories":[{"count":3,"id":0,"name":"0"},{"count":2,"id":1,"name":"1"}],"key":"label_0"}'
        >>> [row["name"] for row in page.read_at_page_by_name("0", 1, 2)]
        ['e']
    """

    def __init__(self, file_name: str | list[str], num_consumer: int = 4):
        where = "MindPage"
        if not (isinstance(file_name, (str, os.PathLike))
                or (isinstance(file_name, list) and file_name and all(isinstance(f, str) for f in file_name))):
            raise ArgumentError(f"{where}: `file_name` must be a str or a list of str. Found: {file_name!r}")
        if not isinstance(num_consumer, int) or isinstance(num_consumer, bool) or num_consumer < 1:
            raise ArgumentError(f"{where}: `num_consumer` must be an int >= 1. Found: {num_consumer!r}")
        self._set = MindRecordSet(where, file_name)
        self._candidate_fields = list(self._set.index_fields)
        self._category_field: str | None = None
        self._groups: list[tuple[Any, list[int]]] = []

    @property
    def candidate_fields(self) -> list[str]:
        """The fields rows can be grouped by (the set's index fields)."""
        return list(self._candidate_fields)

    @property
    def category_field(self) -> str | None:
        """The field the rows are grouped by (set it to one of ``candidate_fields``)."""
        return self._category_field

    @category_field.setter
    def category_field(self, category_field: str) -> None:
        if not category_field or not isinstance(category_field, str):
            raise ArgumentError(f"MindPage: `category_field` must be a non-empty str. Found: {category_field!r}")
        if category_field not in self._candidate_fields:
            raise ArgumentError(f"MindPage: field {category_field!r} is not a candidate category field "
                                f"{self._candidate_fields}")
        records = MindRecordSet("MindPage", [shard.path for shard in self._set.shards], [category_field])
        values = [row[0] for row in records.fetch(range(records.num_rows), python=True)]
        groups: dict[Any, list[int]] = {}
        for row, value in enumerate(values):
            groups.setdefault(value, []).append(row)
        self._groups = sorted(groups.items(), key=lambda item: item[0])
        self._category_field = category_field

    def _need_category(self) -> None:
        if self._category_field is None:
            raise ArgumentError("MindPage: set `category_field` (one of candidate_fields) first")

    def read_category_info(self) -> str:
        """The categories of ``category_field`` as MindSpore's JSON string."""
        self._need_category()
        categories = [{"count": len(rows), "id": k, "name": str(value)}
                      for k, (value, rows) in enumerate(self._groups)]
        return json.dumps({"categories": categories, "key": f"{self._category_field}_0"}, separators=(",", ":"))

    def _page(self, rows: list[int], page: int, num_row: int) -> list[dict[str, Any]]:
        if page * num_row >= len(rows):
            raise ArgumentError(f"MindPage: page {page} of {num_row} rows is past the category's {len(rows)} rows")
        chosen = rows[page * num_row : (page + 1) * num_row]
        return [dict(zip(self._set.columns, values)) for values in self._set.fetch(chosen, python=True)]

    @staticmethod
    def _check_page(page: Any, num_row: Any) -> None:
        if not isinstance(page, int) or isinstance(page, bool) or page < 0:
            raise ArgumentError(f"MindPage: `page` must be an int >= 0. Found: {page!r}")
        if not isinstance(num_row, int) or isinstance(num_row, bool) or num_row <= 0:
            raise ArgumentError(f"MindPage: `num_row` must be an int > 0. Found: {num_row!r}")

    def read_at_page_by_id(self, category_id: int, page: int, num_row: int) -> list[dict[str, Any]]:
        """Page ``page`` of ``num_row`` rows of the category with id ``category_id``."""
        if not isinstance(category_id, int) or isinstance(category_id, bool) or category_id < 0:
            raise ArgumentError(f"MindPage: `category_id` must be an int >= 0. Found: {category_id!r}")
        self._check_page(page, num_row)
        self._need_category()
        if category_id >= len(self._groups):
            raise ArgumentError(f"MindPage: `category_id` must be in [0, {len(self._groups)}). Found: {category_id}")
        return self._page(self._groups[category_id][1], page, num_row)

    def read_at_page_by_name(self, category_name: str, page: int, num_row: int) -> list[dict[str, Any]]:
        """Page ``page`` of ``num_row`` rows of the category whose value reads ``category_name``."""
        if not isinstance(category_name, str):
            raise ArgumentError(f"MindPage: `category_name` must be a str. Found: {category_name!r}")
        self._check_page(page, num_row)
        self._need_category()
        for value, rows in self._groups:
            if str(value) == category_name:
                return self._page(rows, page, num_row)
        raise ArgumentError(f"MindPage: no category named {category_name!r} in field {self._category_field!r}")
