"""The one usage contract: every usage error is one line on stderr naming the option, the value
and what is allowed, and exit 2.

* :func:`usage_line` renders a :class:`~kreplica.formats.usage.UsageError` (the commands' own
  checks, and the model's for what it is given) or any of click's parse errors (a word outside a
  choice, a missing argument, an unknown option, a number out of range) as that line; the
  top-level group (:mod:`kreplica.cli.main`) and the command wrapper (:mod:`kreplica.cli.runner`)
  both print it, so no click usage block (four lines) is ever shown for a mistake.
* :func:`command` makes the command class of a command, which declares its rules once: option
  groups that exclude each other, options that need another, and old spellings kept as hidden
  aliases of the new (:data:`RENAMED`). Whatever the declaration, a single-valued option given
  twice with different values (``--at-zxid 5 --at-zxid 6``, ``--transactional
  --not-transactional``) is refused rather than resolved silently to the last, as click would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from typer._click import exceptions as errors   # typer vendors click: its parser and exceptions are these
from typer._click.core import Context, Parameter, ParameterSource
from typer.core import TyperCommand, TyperOption

from kreplica.formats.usage import UsageError

PREFIX = "kreplica: error: "

#: old spelling -> the one kept, per idea (one vocabulary across commands; CHANGELOG "Deprecated")
RENAMED: Mapping[str, str] = {
    "--from-zxid": "--from",                 # zk log: a range is --from/--to, as in timeline
    "--to-zxid": "--to",
    "--export": "--output-dir",              # truncate-plan: a directory written is --output-dir
    "--out": "--output-dir",                 # fleet scan, fleet run
    "--emit-election-json": "--output-file",  # plan-elect: the one file written is --output-file
    "--shutdown": "--controlled-shutdown",   # plan-elect: a broker id (inspect-dir's --shutdown is clean|unclean)
    "--payloads": "--record-bytes",          # fleet scan, fleet run (--payload is how bytes are written)
}


def usage_line(exc: BaseException) -> str:
    """The one line (``kreplica: error: OPTION: what was given, what is allowed``) for a
    :class:`UsageError` or a click parse error."""
    if isinstance(exc, UsageError):
        text = exc.one_line()
    elif isinstance(exc, errors.MissingParameter):
        text = f"{_name(exc.param)}: required, but not given" if exc.param is not None else exc.format_message()
    elif isinstance(exc, errors.BadParameter) and exc.param is not None:
        text = f"{_name(exc.param)}: {exc.message}"
    elif isinstance(exc, errors.NoSuchOption):
        close = sorted(exc.possibilities or ())
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        command = exc.ctx.command_path if exc.ctx is not None else "kreplica"
        text = f"{exc.option_name}: no such option{hint}; {command} --help lists them"
    elif isinstance(exc, errors.BadOptionUsage):
        text = _lower(exc.message)
    elif isinstance(exc, errors.ClickException):
        text = _lower(exc.format_message())
    else:
        text = str(exc)
    return PREFIX + " ".join(text.split()).rstrip(".")


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def _name(param: Parameter) -> str:
    """An option as typed (its first long name) or an argument as the help shows it (SOURCE)."""
    if isinstance(param, TyperOption):
        longs = [o for o in param.opts if o.startswith("--")]
        return (longs or param.opts)[0]
    return (param.metavar or param.name or "ARGUMENT").strip("[].").upper()


@dataclass(frozen=True)
class Rules:
    """A command's declared usage rules, by option spelling (an argument by its metavar: SOURCE).

    ``exclusive``: groups of which at most one option may be given; ``needs``: ``(option,
    (alternatives...))``, an option that means nothing without one of the alternatives;
    ``renamed``: old spellings this command accepts as hidden aliases (keys of :data:`RENAMED`).
    """

    exclusive: tuple[tuple[str, ...], ...] = ()
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    renamed: tuple[str, ...] = ()


class UsageCommand(TyperCommand):
    """A command that holds to the usage contract: its old spellings are rewritten (with a note),
    then an option given twice with different values, exclusive options given together and an
    option without what it needs are refused, each as one :class:`UsageError`."""

    rules = Rules()

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:
            return super().parse_args(ctx, args)
        args = self._rename(args)
        if set(args) & set(ctx.help_option_names):
            return super().parse_args(ctx, args)
        self._refuse_repeats(ctx, args)
        rest = super().parse_args(ctx, args)
        self._refuse_conflicts(ctx)
        return rest

    def _rename(self, args: list[str]) -> list[str]:
        """``args`` with each old spelling replaced by the new, and a one-line note on stderr."""
        from kreplica.cli.runner import error_line

        out, noted = [], set()
        for k, token in enumerate(args):
            if token == "--":
                return out + args[k:]
            old, eq, value = token.partition("=")
            if old in self.rules.renamed:
                new = RENAMED[old]
                if old not in noted:
                    noted.add(old)
                    error_line(f"kreplica: note: {old} is deprecated and will be removed: use {new}")
                token = new + eq + value
            out.append(token)
        return out

    def _refuse_repeats(self, ctx: Context, args: list[str]) -> None:
        """Parse ``args`` once more with every single-valued option collecting all its values; one
        given twice with different values is refused (click would keep the last)."""
        parser = self.make_parser(ctx)
        for option in {*parser._long_opt.values(), *parser._short_opt.values()}:
            option.action = {"store": "append", "store_const": "append_const"}.get(option.action, option.action)
        opts, _args, _order = parser.parse_args(args=list(args))
        for param in self.get_params(ctx):
            if not isinstance(param, TyperOption) or param.multiple or param.count:
                continue
            values = opts.get(param.name)
            if isinstance(values, list) and len(set(map(repr, values))) > 1:
                if param.is_flag and param.secondary_opts:
                    raise UsageError(f"given both ways ({'/'.join(param.opts + param.secondary_opts)}): give one",
                                     option=_name(param))
                shown = ", then ".join(repr(v) for v in values)
                raise UsageError(f"given {len(values)} times ({shown}): give it once", option=_name(param))

    def _refuse_conflicts(self, ctx: Context) -> None:
        unknown = self.undeclared()
        if unknown:
            raise LookupError(f"{ctx.command_path}: a usage rule names {', '.join(unknown)}, which it does not take")
        given = given_options(ctx)
        for group in self.rules.exclusive:
            present = [o for o in group if o in given]
            if len(present) > 1:
                first, second = present[:2]
                raise UsageError(f"excludes {second} (given {shown(first, given[first])} and "
                                 f"{shown(second, given[second])}): give one of {', '.join(group)}", option=first)
        for option, alternatives in self.rules.needs:
            if option in given and not any(a in given for a in alternatives):
                raise UsageError(f"needs {' or '.join(alternatives)} (given {shown(option, given[option])} "
                                 f"without it)", option=option)

    def undeclared(self) -> list[str]:
        """The names the rules use that are no option of this command: a rule naming no option is a
        bug in the declaration, not a rule that never fires (checked for every command by a test,
        and on every run)."""
        spelled = {_name(p) for p in self.params}
        named = [n for group in self.rules.exclusive for n in group]
        named += [n for option, alternatives in self.rules.needs for n in (option, *alternatives)]
        return [n for n in dict.fromkeys(named) if n not in spelled]


def given_options(ctx: Context) -> dict[str, object]:
    """The options (and arguments) given on the command line, by spelling, with their values."""
    return {_name(p): ctx.params.get(p.name) for p in ctx.command.get_params(ctx) if _given(ctx, p)}


def _given(ctx: Context, param: Parameter) -> bool:
    """Given on the command line with a value that asks for something (not ``--no-x``, not empty)."""
    if param.name is None or ctx.get_parameter_source(param.name) is not ParameterSource.COMMANDLINE:
        return False
    value = ctx.params.get(param.name)
    return value is not None and value is not False and value not in ((), [])


def shown(option: str, value: object) -> str:
    """An option as it was given: ``--at-zxid 0x12``, a flag alone."""
    if value is True:
        return option
    if isinstance(value, (list, tuple)):
        value = " ".join(map(str, value))
    return f"{option} {value}"


def command(*, exclusive: Iterable[Iterable[str]] = (), needs: Mapping[str, str | Iterable[str]] | None = None,
            renamed: Iterable[str] = (), base: type[UsageCommand] = UsageCommand) -> type[UsageCommand]:
    """The command class (``@app.command(..., cls=command(...))``) of a command with these rules
    (:class:`Rules`); ``needs`` maps an option to the option, or options, one of which it needs."""
    rules = Rules(tuple(tuple(g) for g in exclusive),
                  tuple((o, (n,) if isinstance(n, str) else tuple(n)) for o, n in (needs or {}).items()),
                  tuple(renamed))
    unknown = [r for r in rules.renamed if r not in RENAMED]
    if unknown:
        raise LookupError(f"not a renamed spelling: {', '.join(unknown)}")
    return type(base.__name__, (base,), {"rules": rules})
