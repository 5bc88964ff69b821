"""One case: a valid command (templates_eval, templates_data) with one or two things changed
(an input file, an option, the environment), in a folder of its own with its own HOME and
TMPDIR."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
from pathlib import Path

from .mutate import damage_index, mutate_bytes
from .options import OptionPicker, is_output, odd_value
from .templates_data import DATA
from .templates_eval import EVAL

TEMPLATES = EVAL + DATA
ENV_KINDS = ["stdout_closed", "stdout_full", "non_utf8_name", "stdin", "fifo_writer",
             "fifo_no_writer", "dev_zero", "dev_urandom", "missing_out_dir", "signal"]
SOURCE = re.compile(r"\{(\w+)\}")


class Case:
    def __init__(self, number: int, sub: str, argv: list, changes: list, env_kind: str | None,
                 folder: Path, inputs: set, outputs: list, stdin_data: bytes | None = None):
        self.number, self.sub, self.argv, self.changes = number, sub, argv, changes
        self.env_kind, self.folder, self.inputs, self.outputs = env_kind, folder, inputs, outputs
        self.stdin_data = stdin_data
        self.fifo_data = None
        self.signal = None
        self.slow = 1
        self.emptied = False  # an input was made empty: an empty output is no defect


def usable(sources: dict, only: set | None) -> list:
    return [t for t in TEMPLATES if (not only or t[0] in only or t[0].split()[0] in only)
            and all(n in sources for n in SOURCE.findall(" ".join(t[1])))]


def _copy_inputs(argv, folder: Path, sources: dict) -> dict:
    names = [SOURCE.fullmatch(a).group(1) for a in argv if SOURCE.fullmatch(a)]
    paths = {}
    for name in dict.fromkeys(names):
        s = sources[name]
        dst = folder / s.name
        (shutil.copytree if s.is_dir() else shutil.copyfile)(s, dst)
        paths[name] = dst
    return paths


def _mutate_file(rng, paths: dict, changes: list) -> bool:
    """Change one input; True if it is now empty (or all white space)."""
    name = rng.choice(list(paths))
    p = paths[name]
    if p.is_symlink() or not p.exists():
        return False
    if p.is_dir():
        changes.append(damage_index(rng, p))
        return False
    special = rng.random()
    if special < 0.04:
        p.unlink()
        p.mkdir()
        changes.append(f"{name}:directory")
        return True
    if special < 0.07:
        p.unlink()
        changes.append(f"{name}:missing")
        return True
    if special < 0.09:
        p.unlink()
        os.symlink(p.name, p)
        changes.append(f"{name}:symlink-loop")
        return True
    data, op = mutate_bytes(rng, p.read_bytes(), p.suffix in (".json", ".jsonl"))
    p.write_bytes(data)
    changes.append(f"{name}:{op}")
    return not data.strip() or op in ("json_type", "truncate", "json_truncate")


def _mutate_option(rng, sub, argv, folder, sources, paths, outputs, changes, picker) -> None:
    options = picker.table.get(sub, [])
    by_flag = {f: o for o in options for f in list(o.opts) + list(o.secondary_opts)}
    valued = [i for i, a in enumerate(argv[:-1]) if a in by_flag and not by_flag[a].is_flag
              and not is_output(by_flag[a])]
    if valued and rng.random() < 0.3:  # the value of an option the command has
        i = rng.choice(valued)
        value, _ = odd_value(rng, by_flag[argv[i]], lambda: _other(rng, folder, sources, paths))
        argv[i + 1] = value[0] if value else ""
        changes.append(f"opt {argv[i]}={argv[i + 1][:60]!r}")
        return
    option = picker.pick(rng, sub)
    if option is None:
        return
    flag = rng.choice(option.opts)
    value, kind = odd_value(rng, option, lambda: _other(rng, folder, sources, paths))
    if kind == "output":
        if rng.random() < 0.7:
            out = folder / f"opt{len(outputs)}.out"
            outputs.append(out)
            value = [str(out)]
        else:
            value = [rng.choice(["", "-", "/", "/nonexistent/x", str(folder / "no" / "x")])]
    argv[len(argv):] = [flag] + value
    changes.append(f"opt {flag}" + (f"={value[0][:60]!r}" if value else ""))


def _other(rng, folder: Path, sources: dict, paths: dict) -> str:
    """A real input of another kind, copied into the case folder."""
    other = sources[rng.choice([n for n in sources if n not in paths])]
    dst = folder / ("other-" + other.name)
    if not dst.exists():
        (shutil.copytree if other.is_dir() else shutil.copyfile)(other, dst)
    return str(dst)


def make_case(rng: random.Random, number: int, base: Path, sources: dict, only: set | None,
              picker: OptionPicker) -> Case:
    templates = usable(sources, only)
    subs = sorted({x[0] for x in templates})
    # a command with more options gets more cases (8 plus its options, in proportion), so that
    # a campaign of 1,000 cases holds every option of suggest (32), cqr, report and gen too
    sub = rng.choices(subs, weights=[8 + len(picker.table.get(x, ())) for x in subs])[0]
    templates = [x for x in templates if x[0] == sub]
    t = rng.choices(templates, weights=[x[2] if len(x) > 2 else 1.0 for x in templates])[0]
    argv = list(t[1])
    folder = base / f"case{number:05d}"
    folder.mkdir(parents=True)
    (folder / "home").mkdir()
    (folder / "tmp").mkdir()
    paths = _copy_inputs(argv, folder, sources)
    outputs = [folder / a[1:] for a in argv if a.startswith("@")]
    argv = [str(paths[a[1:-1]]) if SOURCE.fullmatch(a) else
            str(folder / a[1:]) if a.startswith("@") else a for a in argv]
    changes, env_kind, emptied = [], None, False
    for _ in range(1 if rng.random() < 0.8 else 2):
        r = rng.random()
        if r < 0.45 and rng.random() < 0.6 and picker.lacking(sub):
            r = 0.5  # while the command has an option no case held, most changes add one
        if r < 0.45 and paths:
            emptied |= _mutate_file(rng, paths, changes)
        elif r < 0.87:
            _mutate_option(rng, sub, argv, folder, sources, paths, outputs, changes, picker)
        elif env_kind is None:
            env_kind = rng.choice(ENV_KINDS)
            changes.append(f"env:{env_kind}")
    picker.seen(sub, argv)
    case = Case(number, sub, argv, changes, env_kind, folder, set(), outputs)
    case.slow = t[3] if len(t) > 3 else 1
    case.emptied = emptied
    apply_env(rng, case, paths)
    case.inputs = set(folder.rglob("*"))
    # an output option pointed at an input file overwrites it: its stamp tells it was written
    case.stamps = {p: stamp(p) for p in case.inputs}
    return case


def stamp(path: Path):
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def apply_env(rng, case: Case, paths: dict) -> None:
    kind = case.env_kind
    file_inputs = [(n, p) for n, p in paths.items() if p.is_file() and str(p) in case.argv]
    if kind in ("non_utf8_name", "stdin", "fifo_writer", "fifo_no_writer", "dev_zero",
                "dev_urandom") and not file_inputs:
        case.env_kind = None
        return
    if kind is None:
        return
    if kind in ("non_utf8_name", "stdin", "fifo_writer", "fifo_no_writer", "dev_zero",
                "dev_urandom"):
        name, p = rng.choice(file_inputs)
        i = case.argv.index(str(p))
        if kind == "non_utf8_name":
            new = os.fsencode(p.parent) + b"/x\xff\xfe" + os.fsencode(p.name)
            os.rename(p, new)
            case.argv[i] = new
        elif kind == "stdin":
            case.stdin_data = p.read_bytes()
            case.argv[i] = "-"
        elif kind in ("fifo_writer", "fifo_no_writer"):
            data = p.read_bytes()
            p.unlink()
            os.mkfifo(p)
            if kind == "fifo_writer":
                case.fifo_data = (p, data)
        else:
            case.argv[i] = "/dev/zero" if kind == "dev_zero" else "/dev/urandom"
    elif kind == "missing_out_dir":
        outs = [i for i, a in enumerate(case.argv) if isinstance(a, str) and
                any(a == str(o) for o in case.outputs)]
        if outs:
            i = rng.choice(outs)
            case.argv[i] = str(case.folder / "no" / "such" / Path(case.argv[i]).name)
    elif kind == "signal":
        case.signal = (rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]),
                       rng.uniform(0.05, 2.5))
