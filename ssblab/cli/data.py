"""Data verbs: ``generate``, ``import``, ``export``, ``verify``."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from ssblab.cli.options import SOURCES, engine_arguments, engine_of
from ssblab.cli.progress import progress, ticking
from ssblab.core.validate import ValidationReport

__all__ = ["register"]

STRICT_HELP = ("refuse a message that breaks a strict JSON rule JS peers accept (a lone surrogate, a duplicate key, "
               "-0); by default it is judged as JS judges it and reported as a finding")


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    gen = verbs.add_parser("generate", help="generate a realistic, signed SSB network as JSONL (seeded)")
    gen.add_argument("--spec", type=Path, help="dataset parameters (JSON, e.g. datasets/default.json); the flags "
                     "below override them")
    gen.add_argument("--authors", type=int, help="number of feeds (default 40)")
    gen.add_argument("--messages", type=int, help="number of messages (default 3000)")
    gen.add_argument("--seed", type=int, help="the same seed gives byte-identical output (default 1)")
    gen.add_argument("--hmac-key", help="sign for a test network with this HMAC key (base64)")
    gen.add_argument("--private-fraction", type=float, help="share of private messages (default as ssb-fixtures)")
    gen.add_argument("--secrets", type=Path, help="also write every author's secret file into this folder")
    gen.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    gen.set_defaults(run=_generate)

    imp = verbs.add_parser("import", help="validate messages from JSONL, a log.offset, ssb-db2 or an archive into "
                           "a store")
    imp.add_argument("path", type=Path, help="a JSONL file, a log.offset, an ssb-fixtures folder, ssb-db2 data (the "
                     "folder holding db2/, db2/ itself, or log.bipf) or an archive")
    imp.add_argument("--store", type=Path, required=True, help="the store folder (created if missing)")
    imp.add_argument("--hmac-key", help="the test network's HMAC key (base64)")
    imp.add_argument("--json", action="store_true", help="print the report as JSON")
    imp.add_argument("--strict", action="store_true",
                     help=STRICT_HELP)
    imp.set_defaults(run=_import)

    exp = verbs.add_parser("export", help="write a store's messages out")
    exp.add_argument("--store", type=Path, required=True,
                     help=f"the store folder (for parquet any source: {SOURCES}; an archive is archive.json, an "
                          "'archive build' folder or a blob folder)")
    exp.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl",
                     help="jsonl: the messages; parquet: a verified dataset of tables (docs/datasets.md)")
    engine_arguments(exp, default="spark")
    exp.add_argument("--hmac-key", help="the test network's HMAC key (base64), for --format parquet")
    exp.add_argument("--strict", action="store_true", help=STRICT_HELP + " (for --format parquet)")
    exp.add_argument("--records", action="store_true", help="write {key, value, timestamp} records")
    exp.add_argument("--out", type=Path, required=True)
    exp.set_defaults(run=_export)

    ver = verbs.add_parser("verify", help="verify every message of JSONL, a log.offset, ssb-db2, a store or an archive",
                           description="Exit 0 when every message is valid, 1 otherwise.")
    ver.add_argument("path", type=Path, help=SOURCES)
    ver.add_argument("--hmac-key", help="the test network's HMAC key (base64)")
    engine_arguments(ver)
    ver.add_argument("--json", action="store_true",
                     help='print {"checked", "valid", "invalid", "feeds", "forks", "formats", "findings", "skipped", '
                     '"errors"}')
    ver.add_argument("--strict", action="store_true",
                     help=STRICT_HELP)
    ver.set_defaults(run=_verify)


def _generate(args: argparse.Namespace) -> int:
    from ssblab.datasets import network_spec, read_spec
    from ssblab.generate import GeneratedNetwork, write_jsonl

    parameters = read_spec(args.spec) if args.spec else {}
    parameters = {"authors": 40, "messages": 3000, "seed": 1, **parameters}
    parameters.update({k: v for k in ("authors", "messages", "seed") if (v := getattr(args, k)) is not None})
    options = parameters.setdefault("options", {})
    options.update({k: v for k in ("hmac_key", "private_fraction") if (v := getattr(args, k)) is not None})
    network = GeneratedNetwork(network_spec(parameters))
    with progress("generating", total=network.spec.messages) as bar:
        summary = write_jsonl(ticking(network.messages(), bar), args.out)
    if args.secrets:
        network.write_secrets(args.secrets)
    kinds = ", ".join(f"{kind} {share:.0%}" for kind, share in summary.shares().items())
    print(f"wrote {summary.messages} messages of {summary.feeds} feeds ({summary.bytes:,} bytes) to {args.out}")
    print(f"  {kinds}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from ssblab.pipeline.sources import read_source
    from ssblab.store import Store

    with Store(args.store, hmac_key=args.hmac_key, strict=args.strict) as store, progress("importing") as bar:
        report = store.append(read_source(args.path, hmac_key=args.hmac_key), on_batch=bar.update)
        total = store.count()
    if args.json:
        print(json.dumps({**report.to_json(), "duplicates": report.duplicates, "stored": total}))
    else:
        print(f"imported {report.valid} new messages ({report.duplicates} already stored, "
              f"{report.invalid} invalid); the store holds {total}")
        _print_extras(report, "verified, not stored: the store holds classic feeds")
        _print_errors(report)
    return 0 if report.ok else 1


def _export(args: argparse.Namespace) -> int:
    from ssblab.store import check_output

    check_output(args.out, args.store)
    if args.format == "parquet":
        from ssblab.pipeline.export import export_dataset

        with progress("exporting") as bar:
            summary = export_dataset(args.store, args.out, engine=engine_of(args), hmac_key=args.hmac_key,
                                     strict=args.strict, on_records=bar.update)
        rows = ", ".join(f"{name} {count}" for name, count in summary.rows.items())
        print(f"wrote a Parquet dataset ({summary.bytes:,} bytes, {summary.engine} engine) to {summary.path}: {rows}")
        return 0
    from ssblab.store import Store, export_jsonl

    with Store(args.store, read_only=True) as store:
        count = export_jsonl(store, args.out, records=args.records)
    print(f"wrote {count} messages to {args.out}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from ssblab.pipeline.verify import verify

    engine = engine_of(args)
    with progress("verifying") as bar:
        report = verify(args.path, engine=engine, hmac_key=args.hmac_key, strict=args.strict, on_records=bar.update)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(f"{report.checked} messages of {report.feeds} feeds: {report.valid} valid, "
              f"{report.invalid} invalid, {len(report.forks)} forks")
        _print_extras(report, "of them valid")
        _print_errors(report)
    return 0 if report.ok else 1


def _print_extras(report: ValidationReport, formats_note: str) -> None:
    """The newer feed formats met and the records skipped (ssb-db2's deleted records), when there are any."""
    if report.formats:
        print("  " + ", ".join(f"{count} {name}" for name, count in report.formats.items()) + f" ({formats_note})")
    if report.skipped:
        print("  skipped: " + ", ".join(f"{count} {why}" for why, count in report.skipped.items()))
    if report.findings:
        kinds = Counter(f.code for f in report.findings)
        print(f"  {len(report.findings)} valid messages break a strict JSON rule JS peers accept ("
              + ", ".join(f"{n} {code}" for code, n in kinds.items()) + "; --strict refuses them)")


def _print_errors(report: ValidationReport, limit: int = 20) -> None:
    for error in report.errors[:limit]:
        print(f"  {error}", file=sys.stderr)
    if report.invalid > limit:
        print(f"  … and {report.invalid - limit} more (use --json for all)", file=sys.stderr)
