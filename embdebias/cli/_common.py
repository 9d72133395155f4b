"""What the subcommands share: option builders, output checks, loading, the message printer."""

from __future__ import annotations

import sys

DEFAULT = "glove-6b-50d"
#: The formats as ``--help`` lists them.
FORMATS_TEXT = "native, word2vec-bin, word2vec-text, glove, fasttext-vec, fasttext-bin, gensim-kv"


class Printer:
    """``say(...)``: a message on stderr, or nothing with ``--quiet``."""

    def __init__(self, quiet: bool):
        self.quiet = quiet

    def __call__(self, *args):
        if not self.quiet:
            print(*args, file=sys.stderr, flush=True)


def prepare_output(args, target, say, *, vectors: bool = False, **kwargs):
    """Every command that writes checks its output here first (see ``_atomic.prepare_output``).

    ``vectors``: the output is a vector file in ``args.format`` (or the format its name asks
    for), whose companion files (gensim-kv's ``.vectors.npy``) are checked with it.
    """
    from .._atomic import prepare_output as check

    if vectors:
        from ..io import guess_format_from_path, output_companions

        check_format_matches_name(args, target, say)
        for companion in output_companions(target, args.format or guess_format_from_path(target)):
            check(companion, force=args.force, **kwargs)
    return check(target, force=args.force, log=say, **kwargs)


def check_format_matches_name(args, target, say) -> None:
    """``--format`` that contradicts the output's name (``--format word2vec-bin`` into ``x.txt``): an error,
    unless ``--force``; the next command would detect the content, but a person or a script goes by the name."""
    from ..errors import EmbdebiasError
    from ..io import format_named_by, output_format
    from ..io.formats import same_content

    named = format_named_by(target)
    if args.format is None or named is None:
        return
    fmt = output_format(target, args.format)  # an unknown --format is named here first
    if same_content(fmt, named):
        return
    if not args.force:
        raise EmbdebiasError(f"{target}: --format {fmt} contradicts the name, which asks for {named}; rename the "
                             f"output (e.g. {_renamed(target, fmt)}), drop --format, or give --force to write "
                             f"{fmt} under this name")
    if not getattr(args, "format_warned", False):  # commands check their output twice (before the lock, under it)
        say(f"warning: {target}: writing {fmt} under a name that asks for {named} (--force)")
        args.format_warned = True


def _renamed(target, fmt: str) -> str:
    from pathlib import Path

    from ..io import EXTENSIONS

    name = Path(target).name
    stem = name.split(".", 1)[0] if "." in name.lstrip(".") else name
    return str(Path(target).with_name(stem + EXTENSIONS[fmt]))


def load_many(args) -> dict:
    """The inputs of ``score``/``plot`` by name (repeated names get " (2)", " (3)", ...)."""
    from .. import io

    embeddings = {}
    for src in args.inputs or [DEFAULT]:
        emb = io.load(src, format=args.input_format, limit=args.limit, unicode_errors=args.unicode_errors,
                      trust_pickle=args.trust_pickle)
        name, i = emb.name, 2
        while name in embeddings:
            name, i = f"{emb.name} ({i})", i + 1
        embeddings[name] = emb
    return embeddings


# --------------------------------------------------------------------------- option builders
def input_opts(p):
    """Options of every command that reads vector files (described once, in RunOptions)."""
    from ..pipeline.options import add_arguments

    add_arguments(p, names=("input_format", "limit", "unicode_errors", "trust_pickle"))


def force_opt(p):
    p.add_argument("--force", action="store_true",
                   help="replace an existing output (by default it is kept and the command fails)")


def lists_opt(p):
    from ..pipeline.options import add_arguments

    add_arguments(p, names=("lists",))


def scoring_opts(p, *, strict: bool = True):
    """``--max-missing`` (one default everywhere: RunOptions') and, with ``strict`` (a command that
    scores: its verdict), ``--min-share`` and ``--strict``."""
    from ..pipeline.options import add_arguments

    add_arguments(p, names=("max_missing", "min_share", "strict") if strict else ("max_missing",))


def attribute_opt(p, *, several: bool = False):
    """``--attribute NAME|FILE`` (RunOptions' description; ``several``: a comma-separated list)."""
    from ..pipeline.options import add_arguments

    add_arguments(p, names=("attribute",))
    if not several:  # one output or figure: one attribute
        action = next(a for a in p._actions if a.dest == "attribute")
        action.metavar = "NAME|FILE"
        action.help = ("the protected attribute: a bundled name (gender, race, religion) or a JSON attribute file "
                       "(default gender)")


def one_attribute(args):
    """The :class:`~embdebias.data.attributes.Attribute` of ``--attribute`` (gender when not given),
    one only, resolved where the user named it."""
    from ..data.attributes import resolve_attributes
    from ..errors import EmbdebiasError

    given = list(getattr(args, "attribute", None) or ["gender"])
    found = resolve_attributes(given, getattr(args, "lists", "published"))
    if len(found) > 1:
        raise EmbdebiasError(f"--attribute: this command takes one attribute, got {len(found)} "
                             f"({', '.join(a.name for a in found)})")
    return found[0]


def debias_attribute(args):
    """The attribute(s) of ``embdebias debias --attribute``: one :class:`~embdebias.data.attributes.Attribute`
    (gender when not given), or, for names joined by ``+`` (``gender+race``), the list of them, which
    the methods that erase several attributes with one map take (the others refuse it, naming those
    that do). A file whose own name has a ``+`` is read as one file."""
    from pathlib import Path

    from ..data.attributes import resolve_attributes
    from ..errors import EmbdebiasError

    given = list(getattr(args, "attribute", None) or ["gender"])
    if len(given) == 1 and "+" in given[0] and not Path(given[0]).is_file():
        names = [n.strip() for n in given[0].split("+")]
        if not all(names):
            raise EmbdebiasError(f"--attribute {given[0]}: expected names joined by '+' (gender+race), "
                                 f"found an empty name")
        return resolve_attributes(names, getattr(args, "lists", "published"))
    if len(given) > 1:
        raise EmbdebiasError(f"--attribute: this command writes one output, got {len(given)} attributes "
                             f"({', '.join(given)}); to erase several with one map, join them with '+' "
                             f"({'+'.join(given)})")
    return one_attribute(args)


def list_file_opts(p, *, equalize=True, expand=True):
    from ..pipeline.options import add_arguments

    names = ["definitional", "gender_specific"] + ["equalize"] * equalize + ["expand", "seeds"] * expand
    add_arguments(p, names=names)


def one_line(message: str, limit: int = 600) -> str:
    """An error message as one line of bounded length, whatever input it quotes."""
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    return message if len(message) <= limit else f"{message[:limit]}... ({len(message) - limit:,} more characters)"


def emit_text(args, text: str, say) -> None:
    """A command's text result: written atomically to ``--out`` (never over an input), else printed."""
    if args.out:
        from .._atomic import atomic_file

        with atomic_file(args.out, inputs=args.inputs) as tmp:
            tmp.write_text(text + "\n", encoding="utf-8")
        say(f"wrote {args.out}")
    else:
        print(text)
