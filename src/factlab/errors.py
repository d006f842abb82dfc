"""Errors that name what is wrong and where, so a user can fix the input."""

from __future__ import annotations

from pathlib import Path


class FactlabError(Exception):
    """Base class: every error factlab raises on bad input or configuration."""


class DataError(FactlabError):
    """Bad input data: names the file, the record (line number or id) and the field."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        record: str | int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.record = record
        self.field = field
        where = []
        if file is not None:
            where.append(f"file {self.file}")
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


class DownloadError(FactlabError):
    """A file could not be fetched, or its checksum does not match the manifest."""


class ConfigError(FactlabError, ValueError):
    """A setting (params.yaml value or command option) that cannot work: names the setting and the value.

    Also a ValueError, so that library callers catching ValueError keep working."""


class DataErrors(DataError):
    """Every bad record of one file at once: `details` lists the first `shown` problems (line and field), `count`
    counts them all; the message counts them and quotes the first, so it reads alone (a traceback, a log) and a
    user fixes the file in one pass."""

    def __init__(self, file: str | Path, problems: list[str], *, shown: int = 20) -> None:
        self.details = problems[:shown]
        self.count = len(problems)
        super().__init__(f"{len(problems)} bad record(s); the first: {problems[0]}", file=file)
