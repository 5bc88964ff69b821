"""Conversational turn ids: one canonical form, the published styles, conversion between them.

Every conversational dataset names a turn by (conversation, turn), but the published pipelines
spell that pair differently, and a run only matches qrels whose ids are spelled the same way.
The canonical id is ``conv_turn`` (``31_4``, as TREC CAsT and the QReCC qrels write it).

Styles (the names accepted by ``qid_style=`` / ``--qid-style``), shown for conversation 31, turn 4:

=================  ====================  ==================================================
style              id                    used by
=================  ====================  ==================================================
``canonical``      ``31_4``              TREC CAsT, QReCC qrels_test.json
``dash``           ``31-4``              TopiOCQA dev_gold.trec and dev_type.json
``topiocqa-dev``   ``topiocqa-dev_31_4`` ConvGQR / InfoCQR style TopiOCQA runs
``TopiOCQA-Dev``   ``TopiOCQA-Dev_31_4`` ConvSearch-R1 / RetPO style TopiOCQA runs
``QReCC-Test``     ``QReCC-Test_31_4``   ConvSearch-R1 / RetPO style QReCC runs
``dev-dash``       ``dev-31-4``          ``dev-1-1`` style
=================  ====================  ==================================================

The prefixed styles are two open families, so other splits work the same way: any
``PREFIX_conv_turn`` id (PREFIX: a letter, then letters, digits and ``-``) has the style
``PREFIX`` (``QReCC-Train_1_2`` -> style ``QReCC-Train``), and any ``word-conv-turn`` id
(word: letters only) has the style ``word-dash`` (``train-1-2`` -> ``train-dash``). Prefixes are
case-sensitive: ``topiocqa-dev`` and ``TopiOCQA-Dev`` are different styles.

Conversation and turn numbers are kept as the digit strings they were written with (no
renumbering, leading zeros preserved). A list of ids must use exactly one style: a list that
mixes two raises :class:`~trecqr.errors.InputError` (when the ids come from a named file) or
:class:`~trecqr.errors.UsageError`, naming one id of each style.

All list operations are vectorised with ``pyarrow.compute`` regexes (one pass per style family).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError, UsageError

CANONICAL = "canonical"
DASH = "dash"
NAMED_STYLES = ("canonical", "dash", "topiocqa-dev", "TopiOCQA-Dev", "QReCC-Test", "dev-dash")

# Four disjoint families: an id matches at most one of them.
_FAMILIES = (
    ("canonical", r"^(?P<conv>\d+)_(?P<turn>\d+)$"),
    ("dash", r"^(?P<conv>\d+)-(?P<turn>\d+)$"),
    ("prefix", r"^(?P<prefix>[A-Za-z][A-Za-z0-9-]*)_(?P<conv>\d+)_(?P<turn>\d+)$"),
    ("word-dash", r"^(?P<prefix>[A-Za-z]+)-(?P<conv>\d+)-(?P<turn>\d+)$"),
)
_COMPILED = tuple((name, re.compile(rx)) for name, rx in _FAMILIES)
_PREFIX_STYLE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*$")
_DASH_STYLE = re.compile(r"^([A-Za-z]+)-dash$")


def _style_of(family: str, prefix: str | None) -> str:
    if family == "prefix":
        return prefix
    if family == "word-dash":
        return f"{prefix}-dash"
    return family


def _check_prefix(prefix: str) -> bool:
    """A ``PREFIX_`` style name must not collide with the reserved names."""
    return prefix not in (CANONICAL, DASH) and not _DASH_STYLE.match(prefix)


def check_style(style: str) -> str:
    """Return style if it names a writable style, else raise UsageError."""
    if style in (CANONICAL, DASH) or _DASH_STYLE.match(style or ""):
        return style
    if isinstance(style, str) and _PREFIX_STYLE.match(style):
        return style
    raise UsageError(
        f"unknown query-id style {style!r}: use one of {', '.join(NAMED_STYLES)}, "
        "PREFIX (writes PREFIX_conv_turn) or WORD-dash (writes WORD-conv-turn)")


def split_id(qid: str) -> tuple[str, str, str]:
    """One id -> (conv, turn, style); raises UsageError for an unrecognised id."""
    for family, rx in _COMPILED:
        m = rx.match(qid)
        if m:
            prefix = m.groupdict().get("prefix")
            if prefix is not None and family == "prefix" and not _check_prefix(prefix):
                break
            return m.group("conv"), m.group("turn"), _style_of(family, prefix)
    raise UsageError(f"not a conversational turn id: {qid!r} (expected e.g. 31_4, 31-4, "
                     "QReCC-Test_31_4, dev-31-4)")


def canonical_id(qid: str) -> str:
    """``QReCC-Test_1_2`` -> ``1_2``."""
    conv, turn, _ = split_id(qid)
    return f"{conv}_{turn}"


def format_id(conv, turn, style: str = CANONICAL) -> str:
    """(conv, turn) written in style."""
    check_style(style)
    if style == CANONICAL:
        return f"{conv}_{turn}"
    if style == DASH:
        return f"{conv}-{turn}"
    m = _DASH_STYLE.match(style)
    if m:
        return f"{m.group(1)}-{conv}-{turn}"
    return f"{style}_{conv}_{turn}"


@dataclass
class TurnIds:
    """Parsed ids: conversation and turn digit strings (Arrow arrays) and the one style."""

    conv: pa.Array
    turn: pa.Array
    style: str | None  # None for an empty list

    def __len__(self) -> int:
        return len(self.conv)

    def to_style(self, style: str = CANONICAL) -> pa.Array:
        return format_ids(self.conv, self.turn, style)

    def turn_numbers(self):
        """Turn numbers as an int64 numpy array."""
        return pc.cast(self.turn, pa.int64()).to_numpy(zero_copy_only=False)

    def conv_numbers(self):
        return pc.cast(self.conv, pa.int64()).to_numpy(zero_copy_only=False)


def _as_string_array(ids) -> pa.Array:
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if isinstance(ids, pa.Array):
        return ids if ids.type == pa.string() else pc.cast(ids, pa.string())
    return pa.array([str(x) for x in ids], pa.string())


def _mixed_error(source: str | None, a: str, style_a: str, b: str, style_b: str):
    message = (f"query ids mix two styles: {a!r} ({style_a}) and {b!r} ({style_b}); "
               "convert one side with --qid-style")
    if source is not None:
        return InputError(source, None, message)
    return UsageError(message)


def parse_ids(ids, source: str | None = None) -> TurnIds:
    """Recognise the style of a list/array of ids and split them into conv and turn.

    Raises InputError (source given) or UsageError when an id is not a turn id or when two
    styles are mixed.
    """
    arr = _as_string_array(ids)
    n = len(arr)
    if n == 0:
        empty = pa.array([], pa.string())
        return TurnIds(empty, empty, None)
    if arr.null_count:
        raise (InputError(source, None, "a query id is missing (null)") if source is not None
               else UsageError("a query id is missing (null)"))
    found = []  # (family, mask)
    matched = None
    for family, rx in _FAMILIES:
        mask = pc.match_substring_regex(arr, rx)
        if pc.any(mask).as_py():
            found.append((family, mask))
            matched = mask if matched is None else pc.or_(matched, mask)
    if matched is None or not pc.all(matched).as_py():
        first = pc.index(matched, False).as_py() if matched is not None else 0
        bad = arr[first].as_py()
        message = (f"not a conversational turn id: {bad!r} (expected e.g. 31_4, 31-4, "
                   "QReCC-Test_31_4, dev-31-4)")
        raise InputError(source, None, message) if source is not None else UsageError(message)
    if len(found) > 1:
        firsts = sorted(pc.index(mask, True).as_py() for _, mask in found)[:2]
        a, b = arr[firsts[0]].as_py(), arr[firsts[1]].as_py()
        raise _mixed_error(source, a, split_id_style(a), b, split_id_style(b))
    family = found[0][0]
    parts = pc.extract_regex(arr, dict(_FAMILIES)[family])
    conv, turn = parts.field("conv"), parts.field("turn")
    prefix = None
    if family in ("prefix", "word-dash"):
        prefixes = parts.field("prefix")
        uniq = pc.unique(prefixes)
        if len(uniq) > 1:
            pa_, pb_ = uniq[0].as_py(), uniq[1].as_py()
            a = arr[pc.index(prefixes, pa_).as_py()].as_py()
            b = arr[pc.index(prefixes, pb_).as_py()].as_py()
            raise _mixed_error(source, a, _style_of(family, pa_), b, _style_of(family, pb_))
        prefix = uniq[0].as_py()
        if family == "prefix" and not _check_prefix(prefix):
            message = f"not a conversational turn id: {arr[0].as_py()!r} (reserved prefix)"
            raise InputError(source, None, message) if source is not None else UsageError(message)
    return TurnIds(conv, turn, _style_of(family, prefix))


def split_id_style(qid: str) -> str:
    try:
        return split_id(qid)[2]
    except UsageError:
        return "unrecognised"


def detect_style(ids, source: str | None = None) -> str | None:
    """The one style of a list of ids (None for an empty list)."""
    return parse_ids(ids, source).style


def format_ids(conv, turn, style: str = CANONICAL) -> pa.Array:
    """Arrays of conv and turn strings written in style, vectorised."""
    check_style(style)
    conv = _as_string_array(conv)
    turn = _as_string_array(turn)
    if style == CANONICAL:
        return pc.binary_join_element_wise(conv, turn, "_")
    if style == DASH:
        return pc.binary_join_element_wise(conv, turn, "-")
    m = _DASH_STYLE.match(style)
    if m:
        return pc.binary_join_element_wise(m.group(1), conv, turn, "-")
    return pc.binary_join_element_wise(style, conv, turn, "_")


def convert_ids(ids, style: str = CANONICAL, source: str | None = None) -> pa.Array:
    """Any recognised ids (one style) -> the same turns written in style (an Arrow string array)."""
    check_style(style)
    return parse_ids(ids, source).to_style(style)


def to_canonical(ids, source: str | None = None) -> pa.Array:
    return convert_ids(ids, CANONICAL, source)


def restyle(obj, style: str):
    """A Qrels or Run (anything with a ``qid`` Arrow column and ``source``) with its qids
    rewritten in style; the object is copied, never modified."""
    qid = convert_ids(obj.qid, style, getattr(obj, "source", None))
    changes = {"qid": qid}
    names = {f.name for f in dataclasses.fields(obj)}
    if "_raw" in names:
        changes["_raw"] = None  # line lookups in the original file no longer apply
    if "codes" in names:
        changes["codes"] = None  # the scanner's topic table names the old qids
    return dataclasses.replace(obj, **changes)


def same_turns(ids_a, ids_b) -> tuple[str, str] | None:
    """(an id of ids_a, the id of ids_b that names the same turn in another style), when the
    two lists share no id but name some turn both (``QReCC-Test_5_2`` and ``5_2``); None
    otherwise. Ids that are not turn ids are passed over."""
    by_turn = {}
    for qid in ids_b:
        try:
            conv, turn, _ = split_id(qid)
        except UsageError:
            continue
        by_turn.setdefault((conv, turn), qid)
    for qid in ids_a:
        try:
            conv, turn, _ = split_id(qid)
        except UsageError:
            continue
        other = by_turn.get((conv, turn))
        if other is not None and other != qid:
            return qid, other
    return None
