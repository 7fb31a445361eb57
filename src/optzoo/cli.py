"""The ``optzoo`` command: ``list``, ``reproduce``, ``report``.

Example::

    optzoo --version
    optzoo list                                   # slug, status, area, method, module, title
    optzoo reproduce ham --preset smoke --jobs 1  # one paper
    optzoo reproduce predictions                  # every implemented paper of an area

Heavy imports (NumPy, the areas' libraries) happen only inside the command that needs them, so
``optzoo --help`` and ``optzoo list`` answer at once.  Every user error -- unknown slug, preset,
override key, ill-typed value -- is one line on stderr and exit code 2, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from optzoo import registry
from optzoo.errors import ConfigError, NotImplementedPaper, OptzooError

EXIT_USAGE = 2

# Where each implemented paper's method lives, where that is not ``optzoo.<area>.<name>`` with
# ``<name>`` the module of its reproduction (``optzoo.<area>.reproduce.<name>``).
_METHOD_MODULES = {
    "predictions-smoothness": "optzoo.predictions.scheduling",
    "adagrad-nesterov": "optzoo.optim.adaptive_preconditioning",
    "steepest-mirror-flows": "optzoo.optim.steepest_descent",
    "resurgence": "optzoo.optim.surge",
    "entropic-barriers": "optzoo.landscape",
    "kan-convergence": "optzoo.kan.kan_tangent_kernel",
    "f2sa-p": "optzoo.bilevel.f2sa",
    "bogrape": "optzoo.bo.graphs.bogrape",
    "mofjsp-dcan": "optzoo.scheduling.dcan",
    "quasi-equivariant-metanetworks": "optzoo.metanet.qe_nfn",
    "hp-transfer": "optzoo.scaling.complete_p",
    "quant-robustness": "optzoo.scaling.quantization",
}

_EPILOG = """\
examples:
  optzoo list                                every paper: status, area, method, module
  optzoo reproduce ham                       one paper, quick preset (runs/ham/quick/)
  optzoo reproduce ham --preset smoke        a few seconds, every code path
  optzoo reproduce optim --preset smoke      every implemented paper of an area
  optzoo reproduce all --device cuda         every implemented paper, on a GPU
  optzoo reproduce ham --set lr=0.1          override a preset field
  optzoo report runs/ham/quick               rebuild a report from stored trials

`optzoo COMMAND --help` shows a command's options and their defaults.
"""

_REPRODUCE_EPILOG = """\
examples:
  optzoo reproduce decision-metrics                      the quick preset
  optzoo reproduce decision-metrics --preset full --seeds 10
  optzoo reproduce predictions --preset smoke            every paper of an area
  optzoo reproduce decision-metrics --set draws=5000     override a preset field
  optzoo reproduce ham --seed-start 100                  the same claims on fresh seeds
  optzoo reproduce all --backend ray --address ray://head:10001

A rerun of the same command resumes: finished trials are kept in trials.jsonl.
"""


def method_module(paper: registry.Paper) -> str:
    """The module that holds ``paper``'s method (``"-"`` while the paper is planned).

    Example:
        >>> method_module(registry.get("les"))
        'optzoo.bo.les'
    """
    if paper.reproduction is None:
        return "-"
    if paper.slug in _METHOD_MODULES:
        return _METHOD_MODULES[paper.slug]
    name = paper.reproduction.partition(":")[0].rsplit(".", 1)[-1]
    return f"optzoo.{paper.area}.{name}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("optzoo")
    except PackageNotFoundError:  # running from a source tree that is not installed
        from optzoo import __version__

        return __version__


class _VersionAction(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print optzoo's version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"optzoo {_version()}")
        parser.exit(0)


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's layout and shows each option's default (when it has one)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("%(default)" in text or not action.option_strings
                or action.default in (None, False, [], argparse.SUPPRESS)):
            return text
        return f"{text} (default: %(default)s)"


def _parse_sets(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {pair!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _out_dir(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder path, got an empty string")
    return Path(text)


def _nonneg_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``optzoo: error: ...``) and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"optzoo: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``optzoo`` argument parser (usage errors: one line, exit code 2).

    Example:
        >>> build_parser().parse_args(["reproduce", "ham", "--preset", "smoke"]).preset
        'smoke'
    """
    parser = _Parser(
        prog="optzoo",
        description="The optimization methods of ICLR 2026 papers: use them, check their claims.",
        epilog=_EPILOG, formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    p_list = sub.add_parser("list", help="list the registered papers and their status",
                            formatter_class=_HelpFormatter)
    p_list.add_argument("--markdown", action="store_true", help="print the README's table")

    p_rep = sub.add_parser("reproduce", help="run a paper's reproduction and write its report",
                           epilog=_REPRODUCE_EPILOG, formatter_class=_HelpFormatter)
    p_rep.add_argument("target", help="a paper slug, an area name, or 'all'")
    p_rep.add_argument("--preset", default="quick", choices=("smoke", "quick", "full"),
                       help="smoke: every code path in seconds (not evidence); quick: every "
                            "claim in about a minute; full: the paper's small-scale setting")
    p_rep.add_argument("--seeds", type=_positive_int, default=None,
                       help="number of seeds (overrides the preset's)")
    p_rep.add_argument("--seed-start", type=_nonneg_int, default=None, metavar="N",
                       help="run seeds N … N+seeds-1 (fresh seeds; default 0)")
    p_rep.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                       help="override a preset field (repeatable)")
    p_rep.add_argument("--jobs", type=_positive_int, default=None,
                       help="parallel workers (default: number of cores)")
    p_rep.add_argument("--backend", default="local", choices=("local", "ray"),
                       help="local: a process pool of --jobs workers; ray: one task per trial")
    p_rep.add_argument("--address", default=None,
                       help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    p_rep.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                       help="where torch-based trials put their tensors")
    p_rep.add_argument("--out", default="runs", type=_out_dir, help="root folder of runs")
    p_rep.add_argument("--quiet", action="store_true", help="no progress output")

    p_report = sub.add_parser("report", help="rebuild a run's report from its stored trials",
                              formatter_class=_HelpFormatter)
    p_report.add_argument("rundir", type=Path, help="a run folder, e.g. runs/<slug>/quick")

    p_pub = sub.add_parser("publish", help="copy a finished run's verdicts into results/ and "
                                           "regenerate results/RESULTS.md",
                           formatter_class=_HelpFormatter)
    p_pub.add_argument("rundirs", type=Path, nargs="*", metavar="RUN_DIR",
                       help="run folders, e.g. runs/<slug>/quick (none: only check or mark)")
    p_pub.add_argument("--results", type=Path, default=Path("results"),
                       help="the published results folder")
    p_pub.add_argument("--check", action="store_true",
                       help="exit 1 if a published result is stale and not marked so")
    p_pub.add_argument("--mark-stale", action="store_true",
                       help="mark stale results (and unmark fresh ones), regenerate RESULTS.md")
    return parser


def cmd_list(args: argparse.Namespace) -> int:
    if args.markdown:
        print(registry.markdown_table())
        return 0
    rows = [("slug", "status", "area", "method", "module", "title")]
    rows += [(p.slug, p.status, p.area, p.method, method_module(p), p.title)
             for p in registry.PAPERS]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        cells = [f"{cell:<{w}}" for cell, w in zip(row[:5], widths, strict=True)]
        print("  ".join([*cells, row[5]]))
    n = sum(p.status == "implemented" for p in registry.PAPERS)
    print(f"\n{n} implemented, {len(registry.PAPERS) - n} planned")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    overrides = _parse_sets(args.sets)
    papers = registry.select(args.target)
    single = len(papers) == 1 and args.target not in (*registry.AREAS, "all")
    if single and papers[0].status == "planned":
        papers[0].load()  # raises NotImplementedPaper with the message
    runnable = [p for p in papers if p.status == "implemented"]
    if not runnable:  # an area whose papers are all planned, or that has no paper at all
        planned = ", ".join(p.slug for p in papers)
        raise NotImplementedPaper(
            f"area {args.target!r}: no implemented paper yet"
            + (f" (planned: {planned})" if planned else " (no paper registered)")
            + "; see `optzoo list` for implemented papers")
    if overrides and len(runnable) > 1:
        raise ConfigError("--set applies to one paper's preset; name a single slug")

    from optzoo.experiment.runner import run, run_all
    from optzoo.report.render import counts_text, verdict_counts, write_index

    def one_by_one():
        for paper in runnable:
            try:
                yield paper.slug, run(paper.slug, args.preset, seeds=args.seeds,
                                      overrides=overrides, jobs=args.jobs,
                                      backend=args.backend, address=args.address,
                                      device=args.device, out=args.out,
                                      progress=not args.quiet, seed_start=args.seed_start)
            except Exception as err:  # noqa: BLE001 -- judged below, per paper
                yield paper.slug, err

    if len(runnable) > 1 and args.backend == "local":
        # one budget of workers for all the papers: the next paper starts while the last
        # trials of the current one finish (issue 29)
        outcomes = run_all([p.slug for p in runnable], args.preset, seeds=args.seeds,
                           jobs=args.jobs, device=args.device, out=args.out,
                           progress=not args.quiet, seed_start=args.seed_start)
    else:
        outcomes = one_by_one()
    failed = []
    totals = {"held": 0, "not held": 0, "inconclusive": 0}
    for slug, outcome in outcomes:
        if isinstance(outcome, OptzooError):  # a user or backend error: one line, no traceback
            raise outcome
        if isinstance(outcome, OSError):  # a full disk or a read-only folder: the store is kept
            print(f"optzoo: error: {slug}: {outcome}", file=sys.stderr)
            failed.append(slug)
            continue
        if isinstance(outcome, Exception):  # one paper's failure must not lose the others'
            traceback.print_exception(outcome)
            failed.append(slug)
            continue
        per_paper = verdict_counts(outcome.summary.claims)
        totals = {k: totals[k] + per_paper[k] for k in totals}
        counts = counts_text(per_paper, args.preset)
        print(f"{slug} [{args.preset}]: {counts}, "
              f"{outcome.ran} trials run, {outcome.skipped} resumed -> "
              f"{outcome.outdir / 'report.html'}")
    # the index lists every report under --out, so a one-paper run refreshes it too
    index = write_index(args.out, registry.PAPERS, args.preset)
    if not single:
        planned = len(papers) - len(runnable)
        if planned:
            print(f"{planned} planned papers skipped (not implemented yet)")
        print(f"index: {index}")
        print(f"{args.target} [{args.preset}]: {len(runnable) - len(failed)} papers, "
              f"{counts_text(totals, args.preset)}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from optzoo.experiment.runner import config_from_dict, summarize_run

    run_json = args.rundir / "run.json"
    if not run_json.exists():
        raise ConfigError(f"{args.rundir}: not a run folder (no run.json); "
                          f"expected e.g. runs/<slug>/<preset>")
    info = json.loads(run_json.read_text())
    repro = registry.get(info["slug"]).load()
    from optzoo.experiment.store import RunLock
    from optzoo.report.render import counts_text, verdict_counts

    cfg = config_from_dict(repro, info["preset"], info["config"],
                           seed_start=int(info.get("seed_start", 0)))
    with RunLock(args.rundir):
        summary, _ = summarize_run(info["slug"], repro, info["preset"], cfg, args.rundir)
    counts = counts_text(verdict_counts(summary.claims), info["preset"])
    print(f"{info['slug']} [{info['preset']}]: {counts} -> "
          f"{args.rundir / 'report.html'}")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from optzoo.experiment.publish import mark_stale, publish, stale_results, write_results_md

    if not (args.rundirs or args.check or args.mark_stale):
        raise ConfigError("publish: name run folders, or pass --check or --mark-stale")
    for rundir in args.rundirs:
        dest = publish(rundir, args.results)
        print(f"published {rundir} -> {dest}")
    if args.mark_stale:
        for s in mark_stale(args.results):
            print(f"stale: {s.slug} [{s.preset}] ({s.missing} trials missing, {s.extra} no "
                  f"longer in the preset)")
    elif args.rundirs:
        write_results_md(args.results)
    if args.check:
        unmarked = [s for s in stale_results(args.results) if not s.marked]
        for s in unmarked:
            print(f"optzoo: {s.slug} [{s.preset}] is stale: the preset now expands to "
                  f"{s.missing} trials it lacks and drops {s.extra} it has; re-run and publish "
                  f"it, or `optzoo publish --mark-stale`", file=sys.stderr)
        return 1 if unmarked else 0
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the ``optzoo`` command with ``argv`` (default: ``sys.argv[1:]``); the exit code.

    Example:
        >>> main(["reproduce", "hamm"])   # prints to stderr: ... did you mean 'ham'? ...
        2
    """
    args = build_parser().parse_args(argv)
    handler = {"list": cmd_list, "reproduce": cmd_reproduce, "report": cmd_report,
               "publish": cmd_publish}[args.command]
    try:
        return handler(args)
    except (ConfigError, NotImplementedPaper) as err:
        print(f"optzoo: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except OptzooError as err:
        print(f"optzoo: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("optzoo: interrupted; finished trials are kept, rerun to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `optzoo list | head`: the reader left; point stdout at devnull so the interpreter's
        # final flush does not raise again (Python's documented recipe for SIGPIPE).
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
